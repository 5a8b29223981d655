package engine

import (
	"bytes"
	"errors"
	"fmt"
	"log"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/storage"
)

// indexChunk is how many items one reindex command indexes.
const indexChunk = 256

// reindexSpec is a reindex command: index the items in [from, to), at most
// indexChunk of them, in generation gen. The loop sets next to the key to
// continue from, or nil when it reached to.
type reindexSpec struct {
	gen      uint32
	from, to []byte
	next     []byte
}

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

// startIndexBuild switches writes to the record's index generation and
// builds it in the background.
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
		if err := c.buildIndex(ix); err != nil {
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
// items, a chunk per command.
func (c *Container) buildIndex(ix *indexState) error {
	at := ""          // the EPK the walk has reached
	var cursor []byte // the next item key, within the partition that holds at
	for {
		p := c.PartitionFor(at)
		r := p.Range()
		lo, hi := storage.ItemSpan(c.rid, r.Min, openMax(r.Max))
		if cursor == nil || bytes.Compare(cursor, lo) < 0 {
			cursor = lo
		}
		spec := &reindexSpec{gen: ix.gen, from: cursor, to: hi}
		_, err := p.submit(&request{cmd: &Command{Reindex: spec}})
		switch {
		case errors.Is(err, ErrPartitionGone):
			if e, _, ok := storage.SplitItemKey(cursor); ok {
				at = string(e)
			}
			continue
		case err != nil:
			return err
		case spec.next != nil:
			cursor = spec.next
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

// reindex runs a reindex command in the partition's loop, alone in its
// batch, so that it reads the items as the commands before it left them.
func (p *Partition) reindex(r *request) {
	r.err = p.doReindex(r.cmd.Reindex)
	close(r.done)
}

func (p *Partition) doReindex(spec *reindexSpec) error {
	c := p.c
	ix := c.index.Load()
	if ix.gen != spec.gen {
		return errIndexSuperseded
	}
	b := c.e.store.NewBatch()
	n := 0
	var term []byte
	err := c.e.store.Iterate(spec.from, spec.to, func(k, v []byte) (bool, error) {
		if n == indexChunk {
			spec.next = append([]byte(nil), k...)
			return false, nil
		}
		n++
		e, id, ok := storage.SplitItemKey(k)
		if !ok {
			// The span holds only item keys, unless the store is damaged.
			// Not a panic: the loop that runs this recovers none.
			return false, corrupt("key %x in the item span of partition key range %s is not an item key", k, p.info.ID)
		}
		_, _, doc, err := decodeItem(k, v)
		if err != nil {
			return false, err
		}
		if err := eachTerm(ix, doc, &term, func(term []byte) error {
			return b.Set(storage.IndexEntry(nil, c.rid, ix.gen, term, string(e), string(id)), nil)
		}); errors.Is(err, errNotJSON) {
			return false, corrupt("%s cannot be indexed: %v", itemName(k), err)
		} else if err != nil {
			return false, err
		}
		return true, nil
	})
	if err == nil {
		err = b.Commit()
	} else {
		b.Discard()
	}
	if errors.Is(err, ErrCorrupt) {
		return err // no retry mends it: not a 503
	}
	if err != nil {
		return fmt.Errorf("%w: cannot write index entries: %v", ErrUnavailable, err)
	}
	return nil
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
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index.Load() != ix {
		return nil // superseded by another policy change
	}
	info = c.Info()
	info.IndexBuilding = false
	v, err := encodeContainer(info)
	if err != nil {
		return err
	}
	// The record and the deletion of the older generations commit in one
	// batch: once the record says the build is done, nothing else deletes
	// them.
	b := e.store.NewBatch()
	lo, hi := storage.IndexGenerationsSpan(c.rid, 0, ix.gen)
	if err := b.DeleteRange(lo, hi); err != nil {
		b.Discard()
		return err
	}
	if err := b.Set(storage.ContainerKey(info.DB, info.ID), v); err != nil {
		b.Discard()
		return err
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("%w: cannot record the finished index and delete the old one: %v", ErrUnavailable, err)
	}
	c.setInfo(info)
	c.index.Store(&indexState{gen: ix.gen, policy: ix.policy, ready: !ix.policy.None})
	return nil
}
