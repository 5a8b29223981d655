package engine

import (
	"errors"
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

// Query routing: the scope a query reads, narrowed by its filters, and the
// partitions and key spans that scope covers.

// QueryScope says which items a query may read: the items of one partition
// key (or, for hierarchical keys, of a key prefix), of one partition key
// range, or, when neither is set, of the whole container.
type QueryScope struct {
	Key     epk.Key
	HasKey  bool
	RangeID string
	// Keys, when set (and HasKey is not), are the full keys whose logical
	// partitions hold every match: a synthetic key's base values with a
	// random suffix.
	Keys []epk.Key
}

// span is a key span of one partition that a query reads.
type span struct {
	p      *Partition
	lo, hi []byte
	// min and max are the EPK bounds of lo and hi (max "" is open), and
	// point is set for the span of one EPK.
	min, max string
	point    bool
}

// queryRange returns the EPK range a scope covers, and whether the scope
// is a single full key (whose items share one EPK).
func (c *Container) queryRange(scope QueryScope) (epk.Range, bool, error) {
	if !scope.HasKey {
		return epk.FullRange(), false, nil
	}
	if c.fixed {
		return epk.FullRange(), false, nil
	}
	k := scope.Key
	if len(k) == 0 {
		var err error
		if k, err = c.ResolveKey(k); err != nil {
			return epk.Range{}, false, err
		}
	}
	if len(k) > len(c.paths) || (len(k) < len(c.paths) && c.def.Kind != epk.MultiHash) {
		return epk.Range{}, false, fmt.Errorf("%w: the partition key %s does not fit the container's partition key %v", ErrPartitionKeyMismatch, k, c.def.Paths)
	}
	if len(k) == len(c.paths) {
		e, err := c.epkOf(k)
		if err != nil {
			return epk.Range{}, false, err
		}
		return epk.Range{Min: e, Max: e}, true, nil
	}
	r, err := c.def.PrefixRange(k)
	if err != nil {
		return epk.Range{}, false, badRequest("invalid partition key prefix: %v", err)
	}
	return r, false, nil
}

// scopeOf narrows a scope without a partition key to the key (or key
// prefix) that the query's WHERE clause fixes with equalities on the
// partition key paths: such a query targets only the partitions that can
// hold matches.
func (c *Container) scopeOf(filters []exec.Filter, scope QueryScope) (QueryScope, error) {
	if c.synth != nil {
		s, err := c.syntheticScope(filters, scope)
		if err != nil || s.HasKey || len(s.Keys) > 0 {
			return s, err
		}
	}
	if scope.HasKey || c.fixed {
		return scope, nil
	}
	var key epk.Key
	for _, path := range c.paths {
		comp, ok := keyComponent(filters, path)
		if !ok {
			break
		}
		key = append(key, comp)
	}
	if len(key) == len(c.paths) || len(key) > 0 && c.def.Kind == epk.MultiHash {
		scope.Key, scope.HasKey = key, true
	}
	return scope, nil
}

// keyComponent returns the one value an equality filter gives path.
func keyComponent(filters []exec.Filter, path []string) (epk.Component, bool) {
	for _, f := range filters {
		if len(f.Values) != 1 || !slices.Equal(f.Path, path) {
			continue
		}
		switch v := f.Values[0]; v.Kind() {
		case eval.Null:
			return epk.Null(), true
		case eval.Bool:
			return epk.Bool(v.AsBool()), true
		case eval.Number:
			return epk.Number(v.AsFloat()), true
		case eval.String:
			return epk.String(v.AsString()), true
		}
	}
	return epk.Component{}, false
}

// QueryRanges returns the EPK ranges a query reads, in the form query plans
// give them.
func (c *Container) QueryRanges(plan *exec.Plan, scope QueryScope) ([]exec.QueryRange, error) {
	scope, err := c.scopeOf(plan.Filters(), scope)
	if err != nil {
		return nil, err
	}
	if len(scope.Keys) > 0 {
		epks, err := c.keyEPKs(scope.Keys)
		if err != nil {
			return nil, err
		}
		out := make([]exec.QueryRange, len(epks))
		for i, e := range epks {
			out[i] = exec.QueryRange{Min: e, Max: e, IsMinInclusive: true, IsMaxInclusive: true}
		}
		return out, nil
	}
	r, point, err := c.queryRange(scope)
	if err != nil {
		return nil, err
	}
	if point {
		return []exec.QueryRange{{Min: r.Min, Max: r.Min, IsMinInclusive: true, IsMaxInclusive: true}}, nil
	}
	return []exec.QueryRange{{Min: r.Min, Max: r.Max, IsMinInclusive: true}}, nil
}

// spans returns the key spans a scope covers, partition by partition, in
// key order (partition.Map.Spans over one snapshot of the map).
func (c *Container) spans(scope QueryScope) ([]span, error) {
	ps := partition.Scope{RangeID: scope.RangeID}
	if len(scope.Keys) > 0 {
		epks, err := c.keyEPKs(scope.Keys)
		if err != nil {
			return nil, err
		}
		ps.Points = epks
	} else {
		r, point, err := c.queryRange(scope)
		if err != nil {
			return nil, err
		}
		ps.Range, ps.Point = r, point
	}
	m, parts := c.routing()
	ss, err := m.Spans(ps)
	if errors.Is(err, partition.ErrNoRange) {
		return nil, fmt.Errorf("%w: partition key range %q is not a current range of container %q", ErrPartitionGone, scope.RangeID, c.Info().ID)
	} else if err != nil {
		return nil, err
	}
	out := make([]span, 0, len(ss))
	for _, s := range ss {
		p := parts[s.Index]
		if s.Point {
			out = append(out, pointSpan(p, c.rid, s.Min))
			continue
		}
		klo, khi := storage.ItemSpan(c.rid, s.Min, openMax(s.Max))
		out = append(out, span{p: p, lo: klo, hi: khi, min: s.Min, max: openMax(s.Max)})
	}
	return out, nil
}

// pointSpan is the span of the items of one EPK.
func pointSpan(p *Partition, rid [storage.RidLen]byte, e string) span {
	lo := storage.ItemKey(nil, rid, e, "")
	hi := append(storage.ItemKey(nil, rid, e, "")[:len(lo)-1], 1)
	return span{p: p, lo: lo, hi: hi, min: e, point: true}
}

// keyEPKs returns the distinct EPKs of full keys, ascending.
func (c *Container) keyEPKs(keys []epk.Key) ([]string, error) {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		e, err := c.epkOf(k)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func openMax(max string) string {
	if max == epk.MaxEPK {
		return ""
	}
	return max
}
