package gremlin

import (
	"context"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/store"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
	"github.com/parsecdb/parsec/internal/engine"
)

// Machine is the server's Evaluator: package lang's parser (Cosmos's
// limits: 64 KB scripts, operator depth 400) and package traversal's
// breadth-first evaluator.
type Machine struct {
	Limits  lang.Limits
	Options traversal.Options
}

// Parse parses a script with its bindings.
func (m Machine) Parse(script string, bindings map[string]any) (*lang.Traversal, error) {
	return lang.Parse(script, bindings, m.Limits)
}

// Run runs a traversal; script, when not empty, is its text for
// executionProfile().
func (m Machine) Run(ctx context.Context, t *lang.Traversal, s graph.Store, script string) ([]graph.Value, error) {
	o := m.Options
	o.Gremlin = script
	if o.Gremlin == "" {
		o.Gremlin = lang.Format(t)
	}
	r, err := traversal.Run(ctx, t, s, o)
	if err != nil {
		return nil, err
	}
	return r.Values, nil
}

// OpenEngineStore is the server's OpenStore: the engine-backed graph
// store (package store) over the container.
func OpenEngineStore(_ context.Context, e *engine.Engine, db, coll string) (graph.Store, error) {
	c, err := e.Container(db, coll)
	if err != nil {
		return nil, err
	}
	return store.New(c, store.Options{})
}
