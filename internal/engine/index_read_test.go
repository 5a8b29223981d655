package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parsecdb/parsec/internal/query/eval"
)

// TestReadIndexedModel checks ReadIndexed against a model: random items
// with values of every type at a path (and one level down), random terms,
// paged at random sizes with ranges splitting between pages: every range's
// pages hold exactly the items whose value one of the terms selects, in
// key order, each once.
func TestReadIndexedModel(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			e, _ := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true})
			defer e.Close()
			c := mustContainer(t, e, 1000)
			values := []any{nil, true, false, 0, 1, 2.5, -3, 7, "", "a", "b", "ab", "z", []any{1, "a"}, map[string]any{"x": 1}}
			docs := map[string]map[string]any{}
			for i := range 300 {
				id := fmt.Sprint("i", i)
				d := map[string]any{"id": id, "pk": fmt.Sprint("k", rng.IntN(20))}
				if rng.IntN(6) > 0 {
					d["a"] = values[rng.IntN(len(values))]
				}
				if rng.IntN(3) == 0 {
					d["b"] = map[string]any{"c": values[rng.IntN(len(values))]}
				}
				body, _ := json.Marshal(d)
				op, err := c.PrepareWrite(OpUpsert, body, key(d["pk"].(string)), true)
				if err != nil {
					t.Fatal(err)
				}
				if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
					t.Fatalf("upsert: %v %v", err, res)
				}
				docs[id] = d
			}
			val := func(v any) eval.Value {
				b, _ := json.Marshal(v)
				x, err := eval.FromJSON(b)
				if err != nil {
					t.Fatal(err)
				}
				return x
			}
			randTerm := func() IndexTerm {
				tm := IndexTerm{Path: []string{"a"}}
				if rng.IntN(3) == 0 {
					tm.Path = []string{"b", "c"}
				}
				scalar := func() eval.Value { return val(values[rng.IntN(13)]) }
				switch rng.IntN(4) {
				case 0:
					for range 1 + rng.IntN(3) {
						tm.Values = append(tm.Values, scalar())
					}
				case 1:
					tm.Lo = scalar()
					if rng.IntN(2) == 0 {
						if hi := scalar(); hi.Kind() == tm.Lo.Kind() {
							tm.Hi = hi
						}
					}
				case 2:
					tm.Hi = scalar()
				default:
					tm.Kind = []eval.Kind{eval.Null, eval.Bool, eval.Number, eval.String, eval.Array, eval.Object}[rng.IntN(6)]
				}
				return tm
			}
			selects := func(tm IndexTerm, d map[string]any) bool {
				var v any = d
				for _, s := range tm.Path {
					m, ok := v.(map[string]any)
					if !ok {
						return false
					}
					if v, ok = m[s]; !ok {
						return false
					}
				}
				x := val(v)
				switch {
				case len(tm.Values) > 0:
					return slices.ContainsFunc(tm.Values, func(w eval.Value) bool { return eval.Compare(x, w) == 0 && x.Kind() == w.Kind() })
				case tm.Lo.IsDefined() || tm.Hi.IsDefined():
					k := tm.Lo.Kind()
					if !tm.Lo.IsDefined() {
						k = tm.Hi.Kind()
					}
					return x.Kind() == k && (!tm.Lo.IsDefined() || eval.Compare(x, tm.Lo) >= 0) && (!tm.Hi.IsDefined() || eval.Compare(x, tm.Hi) <= 0)
				}
				return x.Kind() == tm.Kind
			}
			for round := range 12 {
				terms := []IndexTerm{randTerm()}
				if rng.IntN(2) == 0 {
					terms = append(terms, randTerm())
				}
				want := map[string]bool{}
				for id, d := range docs {
					for _, tm := range terms {
						if selects(tm, d) {
							want[id] = true
						}
					}
				}
				got := map[string]bool{}
				splits := 0
				for _, p := range c.Partitions() {
					// A range that splits between pages is read on in its
					// children from the same position.
					queue := []struct {
						id    string
						after []byte
					}{{p.ID(), nil}}
					for len(queue) > 0 {
						q := queue[0]
						f, err := c.ReadIndexed(q.id, terms, q.after, 1+rng.IntN(9))
						if errors.Is(err, ErrPartitionGone) {
							queue = queue[1:]
							for _, kid := range c.Partitions() {
								if slices.Contains(kid.info.Parents, q.id) {
									queue = append(queue, struct {
										id    string
										after []byte
									}{kid.ID(), q.after})
								}
							}
							continue
						}
						if err != nil {
							t.Fatalf("round %d, terms %+v: %v", round, terms, err)
						}
						for _, raw := range f.Docs {
							var x struct {
								ID string `json:"id"`
							}
							if err := json.Unmarshal(raw, &x); err != nil {
								t.Fatal(err)
							}
							if got[x.ID] {
								t.Fatalf("round %d: %s read twice", round, x.ID)
							}
							got[x.ID] = true
						}
						if f.Next == nil {
							queue = queue[1:]
						} else {
							queue[0].after = f.Next
						}
						if splits < 2 && round%4 == 3 && rng.IntN(3) == 0 {
							parts := c.Partitions()
							if _, err := c.splitForStorage(parts[rng.IntN(len(parts))]); err != nil {
								t.Fatal(err)
							}
							splits++
						}
					}
				}
				for id := range want {
					if !got[id] {
						t.Fatalf("round %d, terms %+v: %s (%v) is missing", round, terms, id, docs[id])
					}
				}
				for id := range got {
					if !want[id] {
						t.Fatalf("round %d, terms %+v: %s (%v) is not selected", round, terms, id, docs[id])
					}
				}
			}
		})
	}
}

// TestReadIndexedUnusable checks the cases the index cannot serve: a path
// the policy leaves out, a first page selecting more entries than the
// bound, and a later page (a position) selecting more than ten times it.
func TestReadIndexedUnusable(t *testing.T) {
	e, _ := testEngineOpts(t, "", Options{NoThrottle: true, indexCandidates: 10})
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	policy := json.RawMessage(`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/secret/?"}]}`)
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), IndexingPolicy: policy}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		mustWrite(t, c, fmt.Sprintf(`{"id":"%d","pk":"k","n":%d,"secret":1}`, i, i))
	}
	rid := c.Partitions()[0].ID()
	if _, err := c.ReadIndexed(rid, []IndexTerm{{Path: []string{"secret"}, Values: []eval.Value{eval.NumberValue(1)}}}, nil, 100); !errors.Is(err, ErrIndexUnusable) {
		t.Fatalf("an excluded path: got %v, want ErrIndexUnusable", err)
	}
	all := []IndexTerm{{Path: []string{"n"}, Kind: eval.Number}}
	if _, err := c.ReadIndexed(rid, all, nil, 100); !errors.Is(err, ErrIndexUnusable) {
		t.Fatalf("15 candidates over a bound of 10: got %v, want ErrIndexUnusable", err)
	}
	few := []IndexTerm{{Path: []string{"n"}, Lo: eval.NumberValue(3), Hi: eval.NumberValue(9)}}
	f, err := c.ReadIndexed(rid, few, nil, 4)
	if err != nil || len(f.Docs) != 4 || f.Next == nil {
		t.Fatalf("first page: %d docs, next %x, %v", len(f.Docs), f.Next, err)
	}
	f2, err := c.ReadIndexed(rid, all, f.Next, 100)
	if err != nil {
		t.Fatalf("a later page has ten times the bound: %v", err)
	}
	if f.Charge <= 0 || f.Entries != 7 {
		t.Fatalf("first page: charge %v, entries %d, want a charge and 7 entries", f.Charge, f.Entries)
	}
	// Items are in key order; the first page's last key is where the
	// second starts, so together they read no item twice.
	seen := map[string]bool{}
	for _, raw := range append(f.Docs, f2.Docs...) {
		var x struct{ ID string }
		_ = json.Unmarshal(raw, &x)
		if seen[x.ID] {
			t.Fatalf("%s read twice", x.ID)
		}
		seen[x.ID] = true
	}
	// Past ten times the bound, a later page fails too (the new ids sort
	// after the position).
	for i := range 150 {
		mustWrite(t, c, fmt.Sprintf(`{"id":"z%d","pk":"k","n":%d}`, i, i))
	}
	if _, err := c.ReadIndexed(rid, all, f.Next, 100); !errors.Is(err, ErrIndexUnusable) {
		t.Fatalf("a later page over 150 candidates with a bound of 10: %v, want ErrIndexUnusable", err)
	}
}
