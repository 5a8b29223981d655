package engine

import (
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/storage"
)

// pkDeleteChunk is how many items one command of a partition-key delete
// deletes, so that no command holds the partition's write loop for long.
const pkDeleteChunk = 100

// DeletePartitionKey deletes every item of the logical partition k, in
// commands of at most pkDeleteChunk deletes, each an ordinary command of the
// partition's log (so indexes, the change index, statistics and replicas
// follow). Other requests interleave with its commands; an item written
// under the key while it runs may be deleted too. It returns how many items
// it deleted and the request charge.
func (c *Container) DeletePartitionKey(k epk.Key) (int, float64, error) {
	k, err := c.ResolveKey(k)
	if err != nil {
		return 0, 0, err
	}
	e, err := c.epkOf(k)
	if err != nil {
		return 0, 0, err
	}
	lo := storage.ItemKey(nil, c.rid, e, "")
	hi := storage.PrefixEnd(lo)
	deleted, charge := 0, 0.0
	for {
		var ops []Op
		err := c.e.store.Iterate(lo, hi, func(key, _ []byte) (bool, error) {
			ops = append(ops, Op{Kind: OpDelete, ID: string(key[len(lo):]), Key: k, EPK: e})
			return len(ops) < pkDeleteChunk, nil
		})
		if err != nil {
			return deleted, charge, err
		}
		if len(ops) == 0 {
			return deleted, charge, nil
		}
		res, _, err := c.Execute(&Command{Ops: ops}, "")
		if err != nil {
			return deleted, charge, err
		}
		for _, r := range res {
			charge += r.Charge
			if r.Err == nil {
				deleted++
			}
		}
	}
}
