package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// ErrInvalid is the error of a graph element the store cannot write or a
// query it cannot run as given: a vertex without its partition key, a
// property value that is not a string, number or boolean, a reserved
// property name. It wraps engine.ErrBadRequest, so the server maps it as
// it maps the engine's own bad requests.
var ErrInvalid = fmt.Errorf("%w: invalid graph element", engine.ErrBadRequest)

// ErrTooManyElements is the error of a read that would return more than
// Options.MaxElements elements. It wraps engine.ErrBadRequest.
var ErrTooManyElements = fmt.Errorf("%w: too many graph elements", engine.ErrBadRequest)

// Defaults of Options.
const (
	DefaultPageSize    = 1000
	DefaultMaxElements = 100_000
	// DefaultInBatch is how many ids one IN list of a query holds.
	DefaultInBatch = 200
	// maxPointReads bounds the point reads of one Vertices call (ids times
	// partition keys); past it the store queries the partitions instead.
	maxPointReads = 1000
)

// Options tune a Store. Zero fields take their defaults.
type Options struct {
	// PageSize is the page size of the engine queries the store runs.
	PageSize int
	// MaxElements bounds the elements one read returns and the items one
	// Apply deletes for a dropped vertex's edges: past it the call fails
	// with ErrTooManyElements rather than hold an unbounded result. The
	// evaluator's own budget (VertexQuery.Limit) is usually smaller.
	MaxElements int
	// InBatch is the most ids one query's IN list holds; longer lists are
	// queried in several rounds.
	InBatch int
}

func (o Options) withDefaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.MaxElements <= 0 {
		o.MaxElements = DefaultMaxElements
	}
	if o.InBatch <= 0 {
		o.InBatch = DefaultInBatch
	}
	return o
}

// Store is a graph container over an engine container: the graph.Store the
// evaluator reads and writes through. It is safe for concurrent use; it
// remembers the etags of the items it read, so that an update replaces the
// version it read (optimistic concurrency) — construct one per request.
type Store struct {
	c    *engine.Container
	pk   string // the partition key property
	opts Options

	mu    sync.Mutex
	etags map[itemRef]string // the etag of each item read, by key and id
}

// itemRef names an item: its partition key as canonical JSON and its id.
type itemRef struct {
	key string
	id  string
}

var _ graph.Store = (*Store)(nil)

// New returns the store of a graph container. The container must be
// partitioned on one top-level property (/pk): hierarchical keys, nested
// paths and containers without a partition key are refused, as are /id
// and /label, which Cosmos DB refuses as a graph's partition key ("The
// partition key path cannot be /id or /label" for Gremlin accounts:
// https://learn.microsoft.com/azure/cosmos-db/gremlin/partitioning).
func New(c *engine.Container, opts Options) (*Store, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: no container", ErrInvalid)
	}
	def := c.Definition()
	if len(def.Paths) != 1 {
		if len(def.Paths) == 0 {
			return nil, fmt.Errorf("%w: a graph container needs a partition key (a path such as /pk)", ErrInvalid)
		}
		return nil, fmt.Errorf("%w: a graph container's partition key must be one path, not %d (%s)", ErrInvalid, len(def.Paths), strings.Join(def.Paths, ", "))
	}
	segs := epk.SplitPath(def.Paths[0])
	if len(segs) != 1 {
		return nil, fmt.Errorf("%w: a graph container's partition key must be a top-level property such as /pk, not %s", ErrInvalid, def.Paths[0])
	}
	switch segs[0] {
	case "id", "label":
		return nil, fmt.Errorf("%w: a graph container cannot be partitioned on /%s", ErrInvalid, segs[0])
	}
	if reserved(segs[0]) {
		return nil, fmt.Errorf("%w: a graph container cannot be partitioned on the reserved property /%s", ErrInvalid, segs[0])
	}
	return &Store{c: c, pk: segs[0], opts: opts.withDefaults(), etags: map[itemRef]string{}}, nil
}

// PartitionKey is the name of the partition key property.
func (s *Store) PartitionKey() string { return s.pk }

// acct accumulates the StoreOp of one call.
type acct struct {
	ranges map[string]bool
	op     graph.StoreOp
	index  []string
	wrote  int // items written (Apply)
}

func newAcct() *acct { return &acct{ranges: map[string]bool{}} }

func (a *acct) touch(rangeID string) {
	if rangeID != "" {
		a.ranges[rangeID] = true
	}
}

func (a *acct) usedIndex(specs []string) {
	for _, sp := range specs {
		found := false
		for _, x := range a.index {
			if x == sp {
				found = true
				break
			}
		}
		if !found {
			a.index = append(a.index, sp)
		}
	}
}

func (a *acct) result() graph.StoreOp {
	op := a.op
	op.Partitions = len(a.ranges)
	sort.Strings(a.index)
	op.Index = strings.Join(a.index, ",")
	return op
}

// keyOf returns the engine key of a partition key value.
func keyOf(v any) (epk.Key, error) {
	c, err := component(v)
	if err != nil {
		return nil, err
	}
	return epk.Key{c}, nil
}

// component converts a partition key value to its key component. A
// graph's partition key is a string, a number or a boolean.
func component(v any) (epk.Component, error) {
	switch x := v.(type) {
	case string:
		return epk.String(x), nil
	case bool:
		return epk.Bool(x), nil
	case nil:
		return epk.Component{}, fmt.Errorf("%w: the partition key value is missing", ErrInvalid)
	}
	if f, ok := toFloat(v); ok {
		return epk.Number(f), nil
	}
	if u, ok := asString(v); ok {
		return epk.String(u), nil
	}
	return epk.Component{}, fmt.Errorf("%w: a partition key value must be a string, number or boolean, not %T", ErrInvalid, v)
}

// keyText is the canonical JSON of a partition key value, to compare and
// group keys.
func keyText(v any) (string, error) {
	c, err := component(v)
	if err != nil {
		return "", err
	}
	return string(c.AppendJSON(nil)), nil
}

// runQuery runs sql with params over scope, page after page, handing each
// row to each until it returns false, and accounts the pages in a. col,
// when not nil, sizes the pages to the rows its limit still wants, so
// that a query with a small limit reads (and is charged for) little.
func (s *Store) runQuery(ctx context.Context, a *acct, sql string, params map[string]any, scope engine.QueryScope, col *collector, each func(row []byte) (bool, error)) error {
	q, err := parser.Parse(sql)
	if err != nil {
		return fmt.Errorf("BUG: gremlin store: cannot parse its own query %q: %v", sql, err)
	}
	vals := make(map[string]eval.Value, len(params))
	for k, v := range params {
		raw, err := marshalValue(v)
		if err != nil {
			return err
		}
		if vals[k], err = eval.FromJSON(raw); err != nil {
			return fmt.Errorf("%w: query parameter %s: %v", ErrInvalid, k, err)
		}
	}
	plan, err := engine.CompileQuery(q, vals)
	if err != nil {
		return fmt.Errorf("cannot compile query %q: %w", sql, err)
	}
	var state *exec.State
	// Each page ends a round; a page returns at least one row or ends the
	// query, and reads are bounded by the caller's element limit, so the
	// rounds are bounded by the container's items.
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		size := s.opts.PageSize
		if col != nil && col.limit > 0 {
			size = max(1, min(size, col.limit-col.n))
		}
		page, err := s.c.QueryContext(ctx, plan, scope, state, size)
		for _, se := range page.Sessions {
			a.touch(se.RangeID)
		}
		if err != nil {
			return fmt.Errorf("cannot query the graph: %w", err)
		}
		a.op.Charge += page.Charge
		a.op.Size += page.BytesRead
		a.usedIndex(page.Index.Utilized)
		for _, row := range page.Rows {
			if bytes.Contains(row, wholeFloatsMarker[1:len(wholeFloatsMarker)-1]) {
				if row, err = s.asWritten(a, row); err != nil {
					return err
				}
				if row == nil {
					continue
				}
			}
			more, err := each(row)
			if err != nil || !more {
				return err
			}
		}
		if page.Next == nil {
			return nil
		}
		state = page.Next
	}
}

// readItem reads one item by partition key and id; found is false when it
// does not exist.
func (s *Store) readItem(a *acct, pk any, id string) (doc []byte, found bool, err error) {
	k, err := keyOf(pk)
	if err != nil {
		return nil, false, err
	}
	op, err := s.c.PrepareKeyed(engine.OpRead, id, k, true)
	if err != nil {
		if errors.Is(err, engine.ErrBadRequest) {
			// An id the engine cannot hold names no element.
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("cannot read %q: %w", id, err)
	}
	r, se, err := s.c.ReadItem(op)
	a.touch(se.RangeID)
	a.op.Charge += r.Charge
	if errors.Is(err, engine.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot read %q: %w", id, err)
	}
	a.op.Size += len(r.Doc)
	return r.Doc, true, nil
}

// asWritten returns the stored text of the item a query row shows: the
// row of a document with a whole float (fWholeFloats) has it re-encoded
// without its fraction, a point read has it as written. It returns nil
// when the item is gone since the query read it.
func (s *Store) asWritten(a *acct, row []byte) ([]byte, error) {
	st, err := s.decode(row)
	if err != nil {
		return nil, err
	}
	var id string
	var pk any
	switch {
	case st.vertex != nil:
		id, pk = st.vertex.ID, st.vertex.PartitionKey
	case st.edge != nil:
		id, pk = st.edge.ID, st.edge.Out.PartitionKey
	default:
		return row, nil
	}
	if pk == nil {
		return row, nil
	}
	doc, found, err := s.readItem(a, pk, id)
	if err != nil || !found {
		return nil, err
	}
	return doc, nil
}

// remember records the etag of an item read or written.
func (s *Store) remember(key, id, etag string) {
	if etag == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.etags) >= s.opts.MaxElements {
		// A store lives for one request; past its bound it forgets, and
		// later updates replace without a precondition.
		clear(s.etags)
	}
	s.etags[itemRef{key, id}] = etag
}

func (s *Store) etagOf(key, id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.etags[itemRef{key, id}]
}

func (s *Store) forget(key, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.etags, itemRef{key, id})
}
