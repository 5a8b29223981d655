package vector

import (
	"fmt"
	"slices"
	"sort"
)

// Graph defaults (sources in doc.go).
const (
	DefaultMaxDegree = 64
	DefaultAlpha     = 1.2
	// maxSearchList bounds a search list however far a filtered search
	// widens it.
	maxSearchList = 1 << 14
)

// GraphConfig are a diskANN graph's parameters. Zero values mean the
// defaults.
type GraphConfig struct {
	Distance   DistanceFunction
	Dimensions int
	// MaxDegree is R, the most out-neighbours a node keeps (1..MaxDegree).
	MaxDegree int
	// SearchListSize is L while inserting (indexingSearchListSize).
	SearchListSize int
	// Alpha is RobustPrune's α (1 to 2): above 1 it keeps some longer edges,
	// which shortens searches.
	Alpha float32
}

func (c GraphConfig) withDefaults() (GraphConfig, error) {
	if c.Dimensions < 1 || c.Dimensions > MaxDimensions {
		return c, fmt.Errorf("%w: dimensions %d must be between 1 and %d", ErrInvalidPolicy, c.Dimensions, MaxDimensions)
	}
	if c.Distance > Euclidean {
		return c, fmt.Errorf("%w: unknown distance function %d", ErrInvalidPolicy, c.Distance)
	}
	if c.MaxDegree == 0 {
		c.MaxDegree = DefaultMaxDegree
	}
	if c.MaxDegree < 1 || c.MaxDegree > MaxDegree {
		return c, fmt.Errorf("%w: max degree %d must be between 1 and %d", ErrInvalidPolicy, c.MaxDegree, MaxDegree)
	}
	if c.SearchListSize == 0 {
		c.SearchListSize = DefaultIndexingSearchListSize
	}
	if c.SearchListSize < 1 || c.SearchListSize > MaxIndexingSearchListSize {
		return c, fmt.Errorf("%w: indexingSearchListSize %d must be between 1 and %d", ErrInvalidPolicy, c.SearchListSize, MaxIndexingSearchListSize)
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlpha
	}
	if !(c.Alpha >= 1 && c.Alpha <= 2) {
		return c, fmt.Errorf("%w: alpha %v must be between 1 and 2", ErrInvalidPolicy, c.Alpha)
	}
	return c, nil
}

// Graph is a diskANN (Vamana) proximity graph over a NodeStore. Writes
// (Insert, Delete) must be serialized by the caller; searches only read
// the store and may run concurrently with each other when the store
// allows it.
type Graph struct {
	cfg GraphConfig
	m   metric
	s   NodeStore
}

// NewGraph returns a graph over store, which may already hold nodes built
// with the same configuration.
func NewGraph(store NodeStore, cfg GraphConfig) (*Graph, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Graph{cfg: c, m: metric{c.Distance}, s: store}, nil
}

// Config returns the graph's configuration with defaults filled in.
func (g *Graph) Config() GraphConfig { return g.cfg }

// Store returns the graph's node store.
func (g *Graph) Store() NodeStore { return g.s }

// scored is a candidate with its vector, for pruning.
type scored struct {
	cand
	v []float32
}

// search is the state of one greedy search (DiskANN's GreedySearch): a
// list of the L closest nodes found, kept sorted, from which the closest
// unexpanded node is expanded until every node in the list is expanded.
type search struct {
	g        *Graph
	q        []float32
	build    bool // compare with the graph distance (squared L2) rather than the query metric
	l        int
	list     []cand
	expanded []bool
	seen     map[uint64]struct{}
	nodes    map[uint64]Node // every node read
	exp      []cand          // expanded nodes, in expansion order
	filter   Filter
	res      *topK // best k passing filter among all compared nodes (nil in build mode)
	inRes    map[uint64]struct{}
	tested   int // nodes offered to the filter
	passed   int // nodes the filter accepted
	st       Stats
}

func (s *search) dist(v []float32) float32 {
	if s.build {
		return l2sq(s.q, v)
	}
	return s.g.m.dist(s.q, v)
}

// offer compares id with the query and adds it to the list when it is
// among the L closest so far.
func (s *search) offer(id uint64) error {
	if _, ok := s.seen[id]; ok {
		return nil
	}
	s.seen[id] = struct{}{}
	n, ok, err := s.g.s.Get(id)
	if err != nil {
		return fmt.Errorf("cannot read graph node %d: %w", id, err)
	}
	if !ok || len(n.Vector) != len(s.q) {
		return nil // a dangling edge to a deleted node
	}
	s.nodes[id] = n
	c := cand{id, s.dist(n.Vector)}
	s.st.Compared++
	s.toResults(c)
	if len(s.list) >= s.l && !c.less(s.list[len(s.list)-1]) {
		return nil
	}
	i := sort.Search(len(s.list), func(i int) bool { return c.less(s.list[i]) })
	s.list = slices.Insert(s.list, i, c)
	s.expanded = slices.Insert(s.expanded, i, false)
	if len(s.list) > s.l {
		s.list = s.list[:s.l]
		s.expanded = s.expanded[:s.l]
	}
	return nil
}

// toResults offers a compared node to the result heap, once.
func (s *search) toResults(c cand) {
	if s.res == nil {
		return
	}
	if _, ok := s.inRes[c.id]; ok {
		return
	}
	s.tested++
	if s.filter == nil || s.filter(c.id) {
		s.passed++
		s.inRes[c.id] = struct{}{}
		s.res.push(c)
	}
}

// restart begins the search again from the entry point with a list of l,
// keeping the results found so far.
func (s *search) restart(l int) error {
	s.l = l
	s.list, s.expanded = s.list[:0], s.expanded[:0]
	s.seen = make(map[uint64]struct{}, 4*l)
	e, ok, err := s.g.s.Entry()
	if err != nil || !ok {
		return err
	}
	return s.offer(e)
}

// run expands nodes until every node in the list is expanded, or the
// expansion budget (a bound against corrupt graphs) is spent.
func (s *search) run() error {
	budget := 8*s.l + 64
	for budget > 0 {
		i := slices.Index(s.expanded, false)
		if i < 0 {
			return nil
		}
		budget--
		s.expanded[i] = true
		c := s.list[i]
		s.exp = append(s.exp, c)
		s.st.Visited++
		for _, nb := range s.nodes[c.id].Neighbors {
			if err := s.offer(nb); err != nil {
				return err
			}
		}
	}
	return nil
}

// newSearch starts a search for the prepared vector q from the entry
// point; ok is false for an empty graph.
func (g *Graph) newSearch(q []float32, l int, build bool) (*search, bool, error) {
	s := &search{g: g, q: q, build: build, l: l, seen: make(map[uint64]struct{}, 4*l), nodes: make(map[uint64]Node, 4*l)}
	e, ok, err := g.s.Entry()
	if err != nil {
		return nil, false, fmt.Errorf("cannot read graph entry point: %w", err)
	}
	if !ok {
		return s, false, nil
	}
	if err := s.offer(e); err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// Search returns the k nodes closest to q that pass filter, best first,
// with the service's scores. The search list is L = k ×
// searchListSizeMultiplier. The filter does not steer the walk (nodes that
// fail it still lead to others); it decides which compared nodes are
// results. When it rejects some, the search is run again with L divided by
// the fraction it accepted, and then with the list doubled while fewer
// than k results were found, until the graph is exhausted or the list
// reaches its bound (16384).
func (g *Graph) Search(q []float32, k int, opts QueryOptions, filter Filter) ([]Result, Stats, error) {
	if err := opts.Validate(); err != nil {
		return nil, Stats{}, err
	}
	if err := checkDims(q, g.cfg.Dimensions); err != nil {
		return nil, Stats{}, err
	}
	if k < 1 {
		return nil, Stats{}, nil
	}
	l := min(max(k*opts.searchMultiplier(), k), maxSearchList)
	s, ok, err := g.newSearch(g.m.prepare(q), l, false)
	if err != nil || !ok {
		return nil, Stats{}, err
	}
	s.filter = filter
	s.res = newTopK(k)
	s.inRes = make(map[uint64]struct{})
	for _, c := range s.list {
		s.toResults(c)
	}
	if err := s.run(); err != nil {
		return nil, s.st, err
	}
	if filter != nil && s.passed < s.tested && len(s.list) >= s.l {
		// A filter that passes a fraction p of the nodes leaves about
		// p × L of the list to answer with: search again with L / p, so
		// that about L nodes of the list pass.
		want := maxSearchList
		if s.passed > 0 {
			want = int(min(float64(l)*float64(s.tested)/float64(s.passed), maxSearchList))
		}
		if want > s.l {
			if err := s.restart(want); err != nil {
				return nil, s.st, err
			}
			if err := s.run(); err != nil {
				return nil, s.st, err
			}
		}
	}
	for !s.res.full() && len(s.list) >= s.l && s.l < maxSearchList {
		// Still too few results pass the filter: search again with a
		// list twice as long.
		if err := s.restart(min(2*s.l, maxSearchList)); err != nil {
			return nil, s.st, err
		}
		if err := s.run(); err != nil {
			return nil, s.st, err
		}
	}
	return results(g.m, s.res.sorted()), s.st, nil
}

// candidates searches for the prepared vector v in build mode and returns
// the expanded nodes with their squared distances and vectors.
func (g *Graph) candidates(v []float32) ([]scored, map[uint64]Node, bool, error) {
	s, ok, err := g.newSearch(v, g.cfg.SearchListSize, true)
	if err != nil || !ok {
		return nil, nil, ok, err
	}
	if err := s.run(); err != nil {
		return nil, nil, true, err
	}
	out := make([]scored, 0, len(s.exp))
	for _, c := range s.exp {
		out = append(out, scored{c, s.nodes[c.id].Vector})
	}
	return out, s.nodes, true, nil
}

// prune is DiskANN's RobustPrune: from the candidates (sorted by distance
// to p), keep the closest, drop every candidate c that the kept one p*
// covers (α·d(p*, c) ≤ d(p, c)), and repeat until R are kept. Distances
// are squared, hence α².
func (g *Graph) prune(self uint64, cs []scored) []uint64 {
	slices.SortFunc(cs, func(a, b scored) int {
		if a.less(b.cand) {
			return -1
		}
		if b.less(a.cand) {
			return 1
		}
		return 0
	})
	cs = slices.CompactFunc(cs, func(a, b scored) bool { return a.id == b.id })
	a2 := g.cfg.Alpha * g.cfg.Alpha
	out := make([]uint64, 0, g.cfg.MaxDegree)
	dropped := make([]bool, len(cs))
	for i := range cs {
		if dropped[i] || cs[i].id == self {
			continue
		}
		out = append(out, cs[i].id)
		if len(out) >= g.cfg.MaxDegree {
			break
		}
		for j := i + 1; j < len(cs); j++ {
			if !dropped[j] && a2*l2sq(cs[i].v, cs[j].v) <= cs[j].d {
				dropped[j] = true
			}
		}
	}
	return out
}

// load returns id's node, from the cache or the store.
func (g *Graph) load(cache map[uint64]Node, id uint64) (Node, bool, error) {
	if n, ok := cache[id]; ok {
		return n, true, nil
	}
	n, ok, err := g.s.Get(id)
	if err != nil {
		return n, false, fmt.Errorf("cannot read graph node %d: %w", id, err)
	}
	if ok && len(n.Vector) == g.cfg.Dimensions {
		cache[id] = n
		return n, true, nil
	}
	return n, false, nil
}

// scoredAround returns ids as pruning candidates of the vector p, skipping
// ids without a node and skip.
func (g *Graph) scoredAround(cache map[uint64]Node, p []float32, ids []uint64, skip uint64) ([]scored, error) {
	out := make([]scored, 0, len(ids))
	for _, id := range ids {
		if id == skip {
			continue
		}
		n, ok, err := g.load(cache, id)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, scored{cand{id, l2sq(p, n.Vector)}, n.Vector})
		}
	}
	return out, nil
}

// slackDegree is the degree a node may reach through back edges before it
// is pruned back to R: DiskANN's slack factor of 1.3 saves most re-prunes.
func (g *Graph) slackDegree() int { return min(g.cfg.MaxDegree*13/10, MaxDegree) }

// Insert adds v under id (replacing any vector id had): a greedy search
// for v collects candidates, RobustPrune picks id's neighbours, and each
// neighbour gets an edge back to id, pruned again when it exceeds R.
func (g *Graph) Insert(id uint64, v []float32) error {
	return g.insert(id, v, nil)
}

// InsertNode is Insert with a quantized code stored in the node.
func (g *Graph) InsertNode(id uint64, v []float32, code []byte) error {
	if len(code) > MaxQuantizationByteSize {
		return fmt.Errorf("%w: code of %d bytes", ErrInvalidVector, len(code))
	}
	return g.insert(id, v, slices.Clone(code))
}

func (g *Graph) insert(id uint64, v []float32, code []byte) error {
	if err := checkDims(v, g.cfg.Dimensions); err != nil {
		return err
	}
	if _, ok, err := g.s.Get(id); err != nil {
		return fmt.Errorf("cannot read graph node %d: %w", id, err)
	} else if ok {
		if err := g.Delete(id); err != nil {
			return err
		}
	}
	p := g.m.prepare(v)
	if len(p) > 0 && &p[0] == &v[0] {
		p = slices.Clone(p)
	}
	cs, cache, ok, err := g.candidates(p)
	if err != nil {
		return err
	}
	if !ok {
		if err := g.s.Put(id, Node{Vector: p, Code: code}); err != nil {
			return fmt.Errorf("cannot write graph node %d: %w", id, err)
		}
		return g.s.SetEntry(id)
	}
	nbrs := g.prune(id, cs)
	if err := g.s.Put(id, Node{Vector: p, Code: code, Neighbors: nbrs}); err != nil {
		return fmt.Errorf("cannot write graph node %d: %w", id, err)
	}
	return g.addBackEdges(cache, id, nbrs)
}

// addBackEdges adds an edge from each of nbrs to id, re-pruning a
// neighbour whose degree would exceed R.
func (g *Graph) addBackEdges(cache map[uint64]Node, id uint64, nbrs []uint64) error {
	for _, j := range nbrs {
		nj, ok, err := g.load(cache, j)
		if err != nil {
			return err
		}
		if !ok || slices.Contains(nj.Neighbors, id) {
			continue
		}
		next := append(slices.Clip(nj.Neighbors), id)
		if len(next) > g.slackDegree() {
			cs, err := g.scoredAround(cache, nj.Vector, next, j)
			if err != nil {
				return err
			}
			next = g.prune(j, cs)
		}
		nj.Neighbors = next
		cache[j] = nj
		if err := g.s.Put(j, nj); err != nil {
			return fmt.Errorf("cannot write graph node %d: %w", j, err)
		}
	}
	return nil
}

// Delete removes id's node and repairs its in-neighbours (FreshDiskANN's
// delete consolidation, done at once): every node found pointing to id
// replaces that edge by a RobustPrune over its other neighbours and id's
// neighbours. In-neighbours are looked for among id's out-neighbours and
// the nodes a greedy search for id's vector expands; an edge to id that is
// missed stays dangling, and searches skip it. If id was the entry point,
// one of its neighbours becomes the entry. Deleting an absent id does
// nothing.
func (g *Graph) Delete(id uint64) error {
	n, ok, err := g.s.Get(id)
	if err != nil {
		return fmt.Errorf("cannot read graph node %d: %w", id, err)
	}
	if !ok {
		return nil
	}
	cs, _, _, err := g.candidates(n.Vector)
	if err != nil {
		return err
	}
	if err := g.s.Delete(id); err != nil {
		return fmt.Errorf("cannot delete graph node %d: %w", id, err)
	}
	around := slices.Clone(n.Neighbors)
	for _, c := range cs {
		around = append(around, c.id)
	}
	slices.Sort(around)
	around = slices.Compact(around)
	cache := make(map[uint64]Node)
	var survivor uint64
	haveSurvivor := false
	for _, p := range around {
		if p == id {
			continue
		}
		np, ok, err := g.load(cache, p)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if !haveSurvivor || slices.Contains(n.Neighbors, p) && !slices.Contains(n.Neighbors, survivor) {
			survivor, haveSurvivor = p, true
		}
		if !slices.Contains(np.Neighbors, id) {
			continue
		}
		ids := make([]uint64, 0, len(np.Neighbors)+len(n.Neighbors))
		for _, x := range np.Neighbors {
			if x != id {
				ids = append(ids, x)
			}
		}
		ids = append(ids, n.Neighbors...)
		sc, err := g.scoredAround(cache, np.Vector, ids, p)
		if err != nil {
			return err
		}
		var next []uint64
		if len(sc) <= g.slackDegree() {
			next = make([]uint64, 0, len(sc))
			slices.SortFunc(sc, func(a, b scored) int {
				if a.id < b.id {
					return -1
				} else if a.id > b.id {
					return 1
				}
				return 0
			})
			for i, c := range sc {
				if i == 0 || c.id != sc[i-1].id {
					next = append(next, c.id)
				}
			}
		} else {
			next = g.prune(p, sc)
		}
		np.Neighbors = next
		cache[p] = np
		if err := g.s.Put(p, np); err != nil {
			return fmt.Errorf("cannot write graph node %d: %w", p, err)
		}
	}
	e, ok, err := g.s.Entry()
	if err != nil {
		return fmt.Errorf("cannot read graph entry point: %w", err)
	}
	if ok && e == id {
		if haveSurvivor {
			return g.s.SetEntry(survivor)
		}
		return g.s.ClearEntry()
	}
	return nil
}
