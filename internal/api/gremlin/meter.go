package gremlin

import (
	"context"
	"sync"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
)

// meteredStore wraps a request's store: it sums the request units and the
// partitions the store reports, and on a connection authenticated with the
// read-only key it refuses writes before they reach the store. The
// evaluator hands a traversal's writes to Apply at its end, so a refused
// traversal has written nothing.
type meteredStore struct {
	graph.Store
	readOnly bool

	mu      sync.Mutex
	charge  float64
	fanout  int
	ops     int
	results int
}

func (m *meteredStore) add(op graph.StoreOp) {
	m.mu.Lock()
	m.charge += op.Charge
	m.fanout += op.Partitions
	m.results += op.Count
	m.ops++
	m.mu.Unlock()
}

func (m *meteredStore) Vertices(ctx context.Context, q graph.VertexQuery) ([]*graph.Vertex, graph.StoreOp, error) {
	vs, op, err := m.Store.Vertices(ctx, q)
	m.add(op)
	return vs, op, err
}

func (m *meteredStore) Edges(ctx context.Context, q graph.EdgeQuery) ([]*graph.Edge, graph.StoreOp, error) {
	es, op, err := m.Store.Edges(ctx, q)
	m.add(op)
	return es, op, err
}

func (m *meteredStore) Apply(ctx context.Context, ms []graph.Mutation) (graph.StoreOp, error) {
	if m.readOnly && len(ms) > 0 {
		return graph.StoreOp{}, errReadOnly
	}
	op, err := m.Store.Apply(ctx, ms)
	m.add(op)
	return op, err
}

// totals returns the request units charged and the partitions touched so
// far.
func (m *meteredStore) totals() (charge float64, partitions int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.charge, m.fanout
}
