package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/storage"
)

// indexChunk is how many items one reindex command indexes.
const indexChunk = 256

var errIndexSuperseded = errors.New("the indexing policy changed again")

// initIndex sets the container's index state from its record and starts
// the build its record asks for. A record from before indexing existed
// (IndexGen 0), or whose index has an older format, gets a new generation
// built; the record changes when that build completes.
func (c *Container) initIndex(info ContainerInfo) error {
	pol, err := index.Compile(info.IndexingPolicy)
	if err != nil {
		return fmt.Errorf("container %q has an invalid indexing policy: %w", info.ID, err)
	}
	if info.IndexGen == 0 || info.IndexFormat != index.Format {
		info.IndexGen++
		info.IndexBuilding, info.IndexFormat = true, index.Format
		c.info.Store(&info)
	}
	c.index.Store(&indexState{gen: info.IndexGen, policy: pol, ready: !info.IndexBuilding && !pol.None})
	if info.IndexBuilding {
		c.startIndexBuild(info)
	}
	return nil
}

// startIndexBuild builds the record's index generation in the background;
// each partition's writes switch to it with its first chunk.
func (c *Container) startIndexBuild(info ContainerInfo) {
	pol, err := index.Compile(info.IndexingPolicy)
	if err != nil {
		panic("BUG: a stored indexing policy does not compile: " + err.Error())
	}
	ix := &indexState{gen: info.IndexGen, policy: pol}
	c.index.Store(ix)
	c.e.builders.Add(1)
	go func() {
		defer c.e.builders.Done()
		if err := c.buildIndex(ix, info.IndexingPolicy); err != nil {
			if !errors.Is(err, errDeleted) && !errors.Is(err, errIndexSuperseded) {
				log.Printf("parsec: indexing container %s/%s stopped: %v", info.DB, info.ID, err)
			}
			return
		}
		if err := c.e.finishIndexBuild(c, ix); err != nil {
			log.Printf("parsec: indexing container %s/%s: %v", info.DB, info.ID, err)
		}
	}()
}

// buildIndex walks the partitions in EPK order and has each index its
// items, a chunk per reindex command. The first chunk a partition applies
// switches its writes to ix's generation (see applyReindex).
func (c *Container) buildIndex(ix *indexState, policy []byte) error {
	at := ""          // the EPK the walk has reached
	var cursor []byte // the next item key, within the partition that holds at
	var retry time.Duration
	for {
		if c.index.Load() != ix {
			return errIndexSuperseded
		}
		p := c.PartitionFor(at)
		r := p.Range()
		lo, hi := storage.ItemSpan(c.rid, r.Min, openMax(r.Max))
		if cursor == nil || bytes.Compare(cursor, lo) < 0 {
			cursor = lo
		}
		req := &request{cmd: &Command{Reindex: &ReindexCommand{Gen: ix.gen, Policy: policy, From: cursor, To: hi}}}
		_, err := p.submit(req)
		switch {
		case errors.Is(err, ErrPartitionGone):
			if e, _, ok := storage.SplitItemKey(cursor); ok {
				at = string(e)
			}
			continue
		case errors.Is(err, ErrUnavailable) && !errors.Is(c.e.store.Ready(), storage.ErrFailed):
			// The store refused the chunk for now (the disk is nearly
			// full), not for good: try it again later, until the
			// container closes.
			retry = min(max(2*retry, 10*time.Millisecond), 5*time.Second)
			select {
			case <-time.After(retry):
				continue
			case <-p.quit:
				return errDeleted
			}
		case err != nil:
			return err
		}
		retry = 0
		if req.next != nil {
			cursor = req.next
			if e, _, ok := storage.SplitItemKey(cursor); ok {
				at = max(string(e), r.Min)
			}
			continue
		}
		if r.Max == epk.MaxEPK {
			return nil
		}
		at, cursor = r.Max, nil
	}
}

// applyReindex applies a reindex command into b for partition rangeID,
// whose writes maintain index cur. A command of a newer generation
// switches the partition to it (its index record); one of an older
// generation is superseded and does nothing. It reads the committed items,
// which a reindex command, applied alone, finds as the commands before it
// left them. It returns the partition's index afterwards and where the
// chunk stopped (nil at the end of the span).
func applyReindex(rd stateReader, b *storage.Batch, rid [storage.RidLen]byte, rangeID string, cur *indexState, cmd *ReindexCommand) (*indexState, []byte, error) {
	ix := cur
	switch {
	case cmd.Gen < cur.gen:
		return cur, nil, errIndexSuperseded
	case cmd.Gen > cur.gen:
		pol, err := index.Compile(cmd.Policy)
		if err != nil {
			// Policies are compiled before they are stored or sent.
			return cur, nil, internalError("a reindex command of generation %d carries an invalid policy: %v", cmd.Gen, err)
		}
		ix = &indexState{gen: cmd.Gen, policy: pol}
		if err := b.Set(storage.PartitionIndexKey(rid, rangeID), encodeIndexRecord(cmd.Gen, cmd.Policy)); err != nil {
			return cur, nil, fmt.Errorf("%w: cannot write the index record: %v", ErrUnavailable, err)
		}
	}
	n := 0
	var term, next []byte
	err := rd.Iterate(cmd.From, cmd.To, func(k, v []byte) (bool, error) {
		if n == indexChunk {
			next = append([]byte(nil), k...)
			return false, nil
		}
		n++
		e, id, ok := storage.SplitItemKey(k)
		if !ok {
			// The span holds only item keys, unless the store is damaged.
			// Not a panic: the loop that runs this recovers none.
			return false, corrupt("key %x in the item span of partition key range %s is not an item key", k, rangeID)
		}
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if err := eachTerm(ix, doc, &term, func(term []byte) error {
			return b.Set(storage.IndexEntry(nil, rid, ix.gen, term, string(e), string(id)), nil)
		}); errors.Is(err, errNotJSON) {
			return false, corrupt("%s cannot be indexed: %v", itemName(k), err)
		} else if err != nil {
			return false, err
		}
		return true, nil
	})
	if errors.Is(err, ErrCorrupt) {
		return cur, nil, err // no retry mends it: not a 503
	}
	if err != nil {
		return cur, nil, fmt.Errorf("%w: cannot write index entries: %v", ErrUnavailable, err)
	}
	return ix, next, nil
}

// The partition index record: gen:uvarint, then the indexing policy's JSON.
func encodeIndexRecord(gen uint32, policy []byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(gen)), policy...)
}

func decodeIndexRecord(rangeID string, v []byte) (uint32, []byte, error) {
	gen, n := binary.Uvarint(v)
	if n <= 0 || gen > math.MaxUint32 {
		return 0, nil, corrupt("the index record of partition key range %s (%x) has no valid generation", rangeID, v)
	}
	return uint32(gen), v[n:], nil
}

// stateReader is what apply reads of the committed store.
type stateReader interface {
	Get(dst, key []byte) ([]byte, error)
	Iterate(lo, hi []byte, fn func(key, value []byte) (bool, error)) error
}

// finishIndexBuild records that ix is complete, deletes the older
// generations and lets queries use ix.
func (e *Engine) finishIndexBuild(c *Container, ix *indexState) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	info := c.Info()
	if _, cur, err := e.containerLocked(info.DB, info.ID); err != nil || cur != c {
		return nil // deleted meanwhile
	}
	defer c.lockRecord()()
	if c.index.Load() != ix {
		return nil // superseded by another policy change
	}
	info = c.Info()
	info.IndexBuilding = false
	// The record and the deletion of the older generations commit in one
	// batch: once the record says the build is done, nothing else deletes
	// them.
	m := &catalogBatch{}
	if err := setContainer(m, info); err != nil {
		return err
	}
	m.deleteRange(storage.IndexGenerationsSpan(c.rid, 0, ix.gen))
	if err := e.commitCatalog(m, "finish the index build"); err != nil {
		return err
	}
	c.setRecord(info)
	c.index.Store(&indexState{gen: ix.gen, policy: ix.policy, ready: !ix.policy.None})
	return nil
}
