package vector

import (
	"fmt"
	"slices"
)

// VectorSeq yields (id, vector) pairs; it stops when yield returns false
// and returns any read error.
type VectorSeq func(yield func(id uint64, v []float32) bool) error

// IDSeq yields ids; it stops when yield returns false and returns any read
// error.
type IDSeq func(yield func(id uint64) bool) error

// Rebuild builds a graph in store (which should be empty) from a stream of
// vectors, inserting them one by one, then moves the entry point to the
// node closest to the vectors' mean (DiskANN starts searches from the
// medoid). The engine uses it when a policy changes or an index is
// created on existing items.
func Rebuild(store NodeStore, cfg GraphConfig, src VectorSeq) (*Graph, error) {
	g, err := NewGraph(store, cfg)
	if err != nil {
		return nil, err
	}
	mean := make([]float64, g.cfg.Dimensions)
	n := 0
	var ierr error
	err = src(func(id uint64, v []float32) bool {
		if ierr = g.Insert(id, v); ierr != nil {
			ierr = fmt.Errorf("cannot insert vector %d: %w", id, ierr)
			return false
		}
		for i, x := range g.m.prepare(v) {
			mean[i] += float64(x)
		}
		n++
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("cannot read vectors: %w", err)
	}
	if ierr != nil {
		return nil, ierr
	}
	if n > 0 {
		if err := g.moveEntry(mean, n); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// moveEntry makes the node closest to sum/n the entry point.
func (g *Graph) moveEntry(sum []float64, n int) error {
	c := make([]float32, len(sum))
	for i, x := range sum {
		c[i] = float32(x / float64(n))
	}
	s, ok, err := g.newSearch(c, g.cfg.SearchListSize, true)
	if err != nil || !ok {
		return err
	}
	if err := s.run(); err != nil {
		return err
	}
	if len(s.list) == 0 {
		return nil
	}
	return g.s.SetEntry(s.list[0].id)
}

// Split divides the graph parent between children (graphs over empty
// stores, with the parent's dimensions and distance function): ids yields
// the parent's node ids and child says which child (0 to len(children)-1)
// each id goes to, as a partition split assigns items. Each node keeps its
// edges to nodes of its own child; a node that loses edges across the
// split is re-pruned over its kept neighbours and its lost neighbours'
// neighbours in the same child (two hops), and finally every node a child
// cannot reach from its entry point is reconnected by a search from the
// entry, as an insert would, so that each child's graph answers for its
// items as the parent's did.
func Split(parent *Graph, ids IDSeq, child func(id uint64) int, children []*Graph) error {
	for i, c := range children {
		if c.cfg.Dimensions != parent.cfg.Dimensions || c.cfg.Distance != parent.cfg.Distance {
			return fmt.Errorf("%w: split child %d has dimensions %d and distance %s, the parent %d and %s",
				ErrInvalidPolicy, i, c.cfg.Dimensions, c.cfg.Distance, parent.cfg.Dimensions, parent.cfg.Distance)
		}
	}
	member := make(map[uint64]int)
	lists := make([][]uint64, len(children))
	var cerr error
	err := ids(func(id uint64) bool {
		c := child(id)
		if c < 0 || c >= len(children) {
			cerr = fmt.Errorf("%w: split assigns id %d to child %d of %d", ErrInvalidPolicy, id, c, len(children))
			return false
		}
		if _, dup := member[id]; !dup {
			member[id] = c
			lists[c] = append(lists[c], id)
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("cannot read the parent's ids: %w", err)
	}
	if cerr != nil {
		return cerr
	}
	// Pass 1: each node's edges within its child, re-pruned where the split
	// cut some.
	cache := make(map[uint64]Node)
	for c, list := range lists {
		cg := children[c]
		for _, id := range list {
			n, ok, err := parent.s.Get(id)
			if err != nil {
				return fmt.Errorf("cannot read graph node %d: %w", id, err)
			}
			if !ok {
				return fmt.Errorf("%w: split: the parent has no node %d", ErrCorrupt, id)
			}
			kept := make([]uint64, 0, len(n.Neighbors))
			lost := 0
			for _, nb := range n.Neighbors {
				if mc, in := member[nb]; in && mc == c {
					kept = append(kept, nb)
				} else {
					lost++
				}
			}
			if lost > 0 {
				cands := slices.Clone(kept)
				for _, nb := range n.Neighbors {
					if mc, in := member[nb]; !in || mc == c {
						continue
					}
					nn, ok, err := parent.load(cache, nb)
					if err != nil {
						return err
					}
					if !ok {
						continue
					}
					for _, x := range nn.Neighbors {
						if mx, in := member[x]; in && mx == c && x != id {
							cands = append(cands, x)
						}
					}
				}
				sc, err := parent.scoredAround(cache, n.Vector, cands, id)
				if err != nil {
					return err
				}
				kept = cg.prune(id, sc)
			}
			if err := cg.s.Put(id, Node{Vector: n.Vector, Code: n.Code, Neighbors: kept}); err != nil {
				return fmt.Errorf("cannot write graph node %d: %w", id, err)
			}
		}
		if len(cache) > 1<<16 {
			clear(cache)
		}
	}
	// Pass 2: an entry point per child, and every node reachable from it.
	pe, pok, err := parent.s.Entry()
	if err != nil {
		return fmt.Errorf("cannot read graph entry point: %w", err)
	}
	for c, list := range lists {
		if len(list) == 0 {
			continue
		}
		if err := children[c].connect(list, pe, pok && member[pe] == c); err != nil {
			return err
		}
	}
	return nil
}

// connect sets the entry point of a graph holding exactly the nodes of
// list (the parent's entry when it is here, else the node closest to the
// mean), then reconnects every node not reachable from it.
func (g *Graph) connect(list []uint64, parentEntry uint64, useParent bool) error {
	if useParent {
		if err := g.s.SetEntry(parentEntry); err != nil {
			return err
		}
	} else {
		if err := g.s.SetEntry(list[0]); err != nil {
			return err
		}
		sum := make([]float64, g.cfg.Dimensions)
		for _, id := range list {
			n, _, err := g.s.Get(id)
			if err != nil {
				return fmt.Errorf("cannot read graph node %d: %w", id, err)
			}
			for i, x := range n.Vector {
				sum[i] += float64(x)
			}
		}
		if err := g.moveEntry(sum, len(list)); err != nil {
			return err
		}
	}
	e, _, err := g.s.Entry()
	if err != nil {
		return err
	}
	reached := make(map[uint64]bool, len(list))
	if err := g.reach(e, reached); err != nil {
		return err
	}
	for _, id := range list {
		if reached[id] {
			continue
		}
		n, ok, err := g.s.Get(id)
		if err != nil || !ok {
			return fmt.Errorf("cannot read graph node %d: %w", id, err)
		}
		cs, cache, _, err := g.candidates(n.Vector)
		if err != nil {
			return err
		}
		own, err := g.scoredAround(cache, n.Vector, n.Neighbors, id)
		if err != nil {
			return err
		}
		nbrs := g.prune(id, append(cs, own...))
		n.Neighbors = nbrs
		if err := g.s.Put(id, n); err != nil {
			return fmt.Errorf("cannot write graph node %d: %w", id, err)
		}
		if err := g.addBackEdges(cache, id, nbrs); err != nil {
			return err
		}
		if err := g.reach(id, reached); err != nil {
			return err
		}
	}
	return nil
}

// reach marks every node reachable from start (breadth first).
func (g *Graph) reach(start uint64, reached map[uint64]bool) error {
	if reached[start] {
		return nil
	}
	reached[start] = true
	queue := []uint64{start}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		n, ok, err := g.s.Get(id)
		if err != nil {
			return fmt.Errorf("cannot read graph node %d: %w", id, err)
		}
		if !ok {
			continue
		}
		for _, nb := range n.Neighbors {
			if !reached[nb] {
				reached[nb] = true
				queue = append(queue, nb)
			}
		}
	}
	return nil
}
