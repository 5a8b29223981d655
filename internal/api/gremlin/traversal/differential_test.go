package traversal_test

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/graph/memgraph"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
)

// naive is a deliberately simple reference interpreter for a subset of
// steps over vertex ids: depth-first lists, no push-down, no store.
type naive struct {
	vs    map[string]*graph.Vertex
	order []string
	es    []*graph.Edge
}

func newNaive(g interface {
	AllVertices() []*graph.Vertex
	AllEdges() []*graph.Edge
}) *naive {
	n := &naive{vs: map[string]*graph.Vertex{}}
	for _, v := range g.AllVertices() {
		n.vs[v.ID] = v
		n.order = append(n.order, v.ID)
	}
	n.es = g.AllEdges()
	return n
}

// step is one generated step: its text and its meaning on one vertex id
// (a flat map), or on the whole list (for dedup).
type step struct {
	text string
	one  func(n *naive, id string) []string
	all  func(n *naive, ids []string) []string
}

func adjacent(dir, label string) func(n *naive, id string) []string {
	return func(n *naive, id string) []string {
		var out []string
		for _, e := range n.es {
			if label != "" && e.Label != label {
				continue
			}
			if (dir == "out" || dir == "both") && e.Out.ID == id {
				out = append(out, e.In.ID)
			}
			if (dir == "in" || dir == "both") && e.In.ID == id {
				out = append(out, e.Out.ID)
			}
		}
		return out
	}
}

func filterStep(text string, keep func(n *naive, id string) bool) step {
	return step{text: text, one: func(n *naive, id string) []string {
		if keep(n, id) {
			return []string{id}
		}
		return nil
	}}
}

func age(v *graph.Vertex) (int32, bool) {
	if ps := v.Properties["age"]; len(ps) > 0 {
		return ps[0].Value.(int32), true
	}
	return 0, false
}

func genStep(r *rand.Rand) step {
	labels := []string{"", "knows", "created"}
	switch r.Intn(14) {
	case 9:
		k := 1 + r.Intn(2)
		return step{text: fmt.Sprintf("repeat(out()).times(%d)", k), one: func(n *naive, id string) []string {
			ids := []string{id}
			for i := 0; i < k; i++ {
				var next []string
				for _, x := range ids {
					next = append(next, adjacent("out", "")(n, x)...)
				}
				ids = next
			}
			return ids
		}}
	case 10:
		return step{text: "coalesce(out('knows'), in('created'))", one: func(n *naive, id string) []string {
			if a := adjacent("out", "knows")(n, id); len(a) > 0 {
				return a
			}
			return adjacent("in", "created")(n, id)
		}}
	case 11:
		return step{text: "optional(out('created'))", one: func(n *naive, id string) []string {
			if a := adjacent("out", "created")(n, id); len(a) > 0 {
				return a
			}
			return []string{id}
		}}
	case 12:
		return step{text: "choose(hasLabel('person'), out(), in())", one: func(n *naive, id string) []string {
			if n.vs[id].Label == "person" {
				return adjacent("out", "")(n, id)
			}
			return adjacent("in", "")(n, id)
		}}
	case 13:
		k := 1 + r.Intn(3)
		return step{text: fmt.Sprintf("order().by('name').limit(%d)", k), all: func(n *naive, ids []string) []string {
			s := append([]string(nil), ids...)
			sort.SliceStable(s, func(a, b int) bool {
				return n.vs[s[a]].Properties["name"][0].Value.(string) < n.vs[s[b]].Properties["name"][0].Value.(string)
			})
			if len(s) > k {
				s = s[:k]
			}
			return s
		}}
	case 0, 1, 2:
		dir := []string{"out", "in", "both"}[r.Intn(3)]
		l := labels[r.Intn(len(labels))]
		arg := ""
		if l != "" {
			arg = "'" + l + "'"
		}
		return step{text: fmt.Sprintf("%s(%s)", dir, arg), one: adjacent(dir, l)}
	case 3:
		l := []string{"person", "software"}[r.Intn(2)]
		return filterStep(fmt.Sprintf("hasLabel('%s')", l), func(n *naive, id string) bool { return n.vs[id].Label == l })
	case 4:
		a := int32(26 + r.Intn(10))
		return filterStep(fmt.Sprintf("has('age', gt(%d))", a), func(n *naive, id string) bool {
			x, ok := age(n.vs[id])
			return ok && x > a
		})
	case 5:
		return step{text: "dedup()", all: func(n *naive, ids []string) []string {
			seen := map[string]bool{}
			var out []string
			for _, id := range ids {
				if !seen[id] {
					seen[id] = true
					out = append(out, id)
				}
			}
			return out
		}}
	case 6:
		return filterStep("where(out())", func(n *naive, id string) bool { return len(adjacent("out", "")(n, id)) > 0 })
	case 7:
		return filterStep("not(in('created'))", func(n *naive, id string) bool { return len(adjacent("in", "created")(n, id)) == 0 })
	}
	return step{text: "union(out(), in())", one: func(n *naive, id string) []string {
		return append(adjacent("out", "")(n, id), adjacent("in", "")(n, id)...)
	}}
}

func (n *naive) eval(steps []step) []string {
	ids := append([]string(nil), n.order...)
	for _, s := range steps {
		if s.all != nil {
			ids = s.all(n, ids)
			continue
		}
		var next []string
		for _, id := range ids {
			next = append(next, s.one(n, id)...)
		}
		ids = next
	}
	return ids
}

func TestDifferential(t *testing.T) {
	iters := 300
	if testing.Short() {
		iters = 60
	}
	for _, load := range []func(testing.TB) graphStore{modernStore, crewStore} {
		g := load(t)
		ref := newNaive(g.(interface {
			AllVertices() []*graph.Vertex
			AllEdges() []*graph.Edge
		}))
		// The model, and (unless -short) the engine-backed store.
		stores := []graphStore{g}
		if !testing.Short() {
			stores = append(stores, engineCopy(t, g.(*memgraph.Graph)))
		}
		r := rand.New(rand.NewSource(7))
		for i := 0; i < iters; i++ {
			var steps []step
			texts := []string{"g.V()"}
			for k := r.Intn(5); k >= 0; k-- {
				s := genStep(r)
				steps = append(steps, s)
				texts = append(texts, s.text)
			}
			ids := ref.eval(steps)
			names := make([]string, len(ids))
			for j, id := range ids {
				names[j] = ref.vs[id].Properties["name"][0].Value.(string)
			}
			var want []string
			ordered := false
			switch r.Intn(4) {
			case 0:
				texts = append(texts, "count()")
				want = []string{fmt.Sprintf("%dl", len(ids))}
			case 1:
				texts = append(texts, "values('name')")
				want = names
			case 2:
				k := 1 + r.Intn(4)
				texts = append(texts, fmt.Sprintf("values('name').order().limit(%d)", k))
				sort.Strings(names)
				if len(names) > k {
					names = names[:k]
				}
				want, ordered = names, true
			default:
				texts = append(texts, "dedup().count()")
				seen := map[string]bool{}
				for _, id := range ids {
					seen[id] = true
				}
				want = []string{fmt.Sprintf("%dl", len(seen))}
			}
			script := strings.Join(texts, ".")
			if !ordered {
				sort.Strings(want)
			}
			for si, s := range stores {
				res, err := runScript(t, s, script, traversal.Options{})
				if err != nil {
					t.Fatalf("store %d: %s: %v", si, script, err)
				}
				got := renderAll(res.Values, ordered)
				if si > 0 {
					for j := range got {
						got[j] = loose(got[j])
					}
				}
				w := want
				if si > 0 {
					w = make([]string, len(want))
					for j := range want {
						w[j] = loose(want[j])
					}
				}
				if strings.Join(got, ",") != strings.Join(w, ",") {
					t.Fatalf("store %d: %s\n got: %v\nwant: %v", si, script, got, w)
				}
			}
		}
	}
}
