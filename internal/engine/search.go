package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/query/eval"

	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/searchpolicy"
)

// Container properties that hold search policies (the indexing policy
// holds the vector and full-text indexes).
const (
	vectorPolicyProp   = "vectorEmbeddingPolicy"
	fullTextPolicyProp = "fullTextPolicy"
)

// specSearch validates the search policies of a container spec.
func specSearch(spec ContainerSpec, indexing json.RawMessage) (*searchpolicy.Policies, error) {
	p, err := searchpolicy.Parse(spec.Extra[vectorPolicyProp], spec.Extra[fullTextPolicyProp], indexing)
	if err != nil {
		if errors.Is(err, searchpolicy.ErrInvalid) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return p, nil
}

// replaceSearch checks a replace's search policies against the
// container's: a replace that leaves out the vector embedding policy keeps
// it (it cannot change, and some clients do not send it back), and
// neither it nor the vector indexes may change.
func replaceSearch(spec *ContainerSpec, info ContainerInfo) error {
	if given, ok := spec.Extra[vectorPolicyProp]; ok {
		// The embedding policy is compared first: a replace that
		// changes it is refused for that, whatever else it changes.
		newp, err := searchpolicy.Parse(given, nil, nil)
		if err != nil {
			return badRequest("%v", err)
		}
		oldp, err := searchpolicy.Parse(info.Extra[vectorPolicyProp], nil, nil)
		if err == nil && !slices.Equal(oldp.Embeddings, newp.Embeddings) {
			return badRequest("Vector Embedding Policy cannot be changed in Collection Replace")
		}
	} else {
		if old, ok := info.Extra[vectorPolicyProp]; ok {
			extra := make(map[string]json.RawMessage, len(spec.Extra)+1)
			for k, v := range spec.Extra {
				extra[k] = v
			}
			extra[vectorPolicyProp] = old
			spec.Extra = extra
		}
	}
	indexing := spec.IndexingPolicy
	if len(indexing) == 0 {
		indexing = info.IndexingPolicy
	}
	newp, err := specSearch(*spec, indexing)
	if err != nil {
		return err
	}
	oldp, err := searchpolicy.Parse(info.Extra[vectorPolicyProp], info.Extra[fullTextPolicyProp], info.IndexingPolicy)
	if err != nil {
		// A policy stored before this validation existed: nothing to
		// compare with.
		return nil
	}
	if err := searchpolicy.CheckReplace(oldp, newp); err != nil {
		return badRequest("%v", err)
	}
	return nil
}

// searchOptions returns the container's search policies for the query
// compiler (nil when it has none or they do not parse).
func (c *Container) searchOptions() *searchpolicy.Policies {
	info := c.Info()
	if info.Extra[vectorPolicyProp] == nil && info.Extra[fullTextPolicyProp] == nil {
		return nil
	}
	p, err := searchpolicy.Parse(info.Extra[vectorPolicyProp], info.Extra[fullTextPolicyProp], info.IndexingPolicy)
	if err != nil {
		return nil
	}
	return p
}

// withStats gathers the BM25 statistics of a plan that scores text with
// FullTextScore over every partition of the container (whatever the
// query's scope: the service's statistics are container-wide), reading
// every item. The full-text index will keep these statistics per
// partition and replace this pass.
func (c *Container) withStats(ctx context.Context, plan *exec.Plan, start time.Time) (*exec.Plan, int, int, error) {
	if !plan.NeedsStats() {
		return plan, 0, 0, nil
	}
	spans, err := c.spans(QueryScope{})
	if err != nil {
		return nil, 0, 0, err
	}
	snap := c.e.readView()
	defer snap.Close()
	var sources []exec.Source
	var scans []*itemSource
	for _, s := range spans {
		src := &itemSource{db: snap, lo: s.lo, hi: s.hi}
		scans = append(scans, src)
		sources = append(sources, src)
	}
	if x := c.expiry(); x != nil {
		for i := range sources {
			sources[i] = &unexpiredSource{src: sources[i], x: x}
		}
	}
	// The pass stops, as a page does, when the request ends or the
	// page's time is spent.
	check := c.limits(ctx, plan, start).Check
	for i := range sources {
		sources[i] = &checkedSource{src: sources[i], check: check}
	}
	out, err := exec.GatherStats(plan, sources)
	docs, bytes := 0, 0
	for _, s := range scans {
		if cerr := s.close(); err == nil {
			err = cerr
		}
		docs += s.docs
		bytes += s.bytes
	}
	return out, docs, bytes, err
}

// checkedSource calls check every checkEvery documents of src.
type checkedSource struct {
	src   exec.Source
	check func() error
	n     int
}

const checkEvery = 256

func (s *checkedSource) Next() ([]byte, eval.Value, bool, error) {
	if s.n++; s.n%checkEvery == 0 {
		if err := s.check(); err != nil {
			return nil, eval.Value{}, false, err
		}
	}
	return s.src.Next()
}

// queryFailure maps an error of a query's statistics pass as QueryContext
// maps its page's errors: the query's own errors are 400s.
func queryFailure(err error) error {
	var qe *eval.Error
	switch {
	case errors.As(err, &qe) || errors.Is(err, eval.ErrInvalidQuery):
		return badRequest("%v", err)
	case errors.Is(err, exec.ErrPageTime):
		return badRequest("the query did not gather its full-text statistics within its time budget (%v): FullTextScore reads every item of the container for each page until the full-text index keeps them", err)
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrThrottled):
		return err
	}
	return fmt.Errorf("%w: query failed: %v", ErrUnavailable, err)
}

// Request units of the search functions, on top of the items read: a
// vector comparison costs in proportion to its dimensions (1 RU per
// vectorDimsPerRU multiply-adds: a 1,536-dimension comparison is about
// 0.015 RU), and text analysis in proportion to the terms analysed (1 RU
// per textTermsPerRU terms). Both grow with the work done, as the service
// charges more for a scan than for an index.
const (
	vectorDimsPerRU = 100_000
	textTermsPerRU  = 1_000
)

// searchCharge is the request charge of the plan's vector comparisons
// and text analysis (since the plan was compiled: one page).
func searchCharge(plan *exec.Plan) float64 {
	w := plan.SearchWork()
	return float64(w.VectorDims.Load())/vectorDimsPerRU + float64(w.Terms.Load())/textTermsPerRU
}

// SearchUtilization describes how a query page ran its vector and
// full-text functions, for x-ms-cosmos-index-utilization: which vector
// or full-text index of the policy applies to each path, and that this
// version scans (every vector compared, every text analysed).
type SearchUtilization struct {
	Vector []string
	Text   []string
}

func (c *Container) searchUtilization(plan *exec.Plan) SearchUtilization {
	var u SearchUtilization
	w := plan.SearchWork()
	var sp *searchpolicy.Policies
	if plan.UsesVectors() || w.Texts.Load() > 0 {
		sp = c.searchOptions()
	}
	if plan.UsesVectors() {
		paths := plan.VectorPaths()
		if len(paths) == 0 {
			paths = []string{"(no vector embedding policy)"}
		}
		for _, p := range paths {
			kind := "no vector index"
			if sp != nil {
				if ix, ok := sp.IndexFor(p); ok {
					kind = ix.Type.String() + " vector index"
				}
			}
			u.Vector = append(u.Vector, fmt.Sprintf("%s (%s; scan: %d vectors compared)", p, kind, w.Vectors.Load()))
		}
	}
	if n := w.Texts.Load(); n > 0 {
		kind := "no full-text index"
		if sp != nil && sp.Text != nil && len(sp.Text.Indexed()) > 0 {
			var paths []string
			for _, x := range sp.Text.Indexed() {
				paths = append(paths, x.Path)
			}
			kind = "full-text index on " + strings.Join(paths, ", ")
		}
		u.Text = append(u.Text, fmt.Sprintf("full-text (%s; scan: %d texts analysed, %d terms)", kind, n, w.Terms.Load()))
	}
	return u
}
