package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/parser"
	"github.com/parsecdb/parsec/internal/storage"
	"github.com/parsecdb/parsec/internal/testclock"
)

// ttlContainer opens an engine on a manual clock, with no background sweep,
// and a container with defaultTtl def (nil: off).
func ttlContainer(t *testing.T, def *int64) (*Container, *testclock.Clock) {
	t.Helper()
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	e, st := testEngineOpts(t, "", Options{Now: clk.Now, NoThrottle: true, TTLSweepInterval: -1})
	t.Cleanup(func() { e.Close(); st.Close() })
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), DefaultTTL: def}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func ttlPut(t *testing.T, c *Container, kind OpKind, id, ttl string) error {
	t.Helper()
	body := fmt.Sprintf(`{"id":%q,"pk":"p"%s}`, id, ttl)
	op, err := c.PrepareWrite(kind, []byte(body), key("p"), true)
	if err != nil {
		return err
	}
	res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
	if err != nil {
		return err
	}
	return res[0].Err
}

// visible lists the ids a point read, a query, the read feed and the
// change feed each see.
func visible(t *testing.T, c *Container, ids []string) (reads, query, feed, changes []string) {
	t.Helper()
	for _, id := range ids {
		op, err := c.PrepareKeyed(OpRead, id, key("p"), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadItem(op); err == nil {
			reads = append(reads, id)
		} else if !errors.Is(err, ErrNotFound) {
			t.Fatalf("read %s: %v", id, err)
		}
	}
	q, err := parser.Parse("SELECT VALUE c.id FROM c")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := CompileQuery(q, nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.QueryContext(context.Background(), plan, QueryScope{}, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range page.Rows {
		query = append(query, strings.Trim(string(r), `"`))
	}
	f, err := c.ReadFeed("", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Docs {
		feed = append(feed, docID(d))
	}
	pg, err := c.ChangeFeed(ChangeFeedScope{RangeID: "0"}, ChangeFeedStart{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range pg.Docs {
		changes = append(changes, docID(d))
	}
	for _, l := range [][]string{reads, query, feed, changes} {
		slices.Sort(l)
	}
	return reads, query, feed, changes
}

func docID(d []byte) string {
	i := strings.Index(string(d), `"id":"`) + 6
	return string(d[i : i+strings.IndexByte(string(d[i:]), '"')])
}

func ptr(n int64) *int64 { return &n }

// TestTTLSemantics: the service's table of container and item time to
// live, seen through point reads, queries, the read feed and the change
// feed at once, before and after the clock passes the expiry.
func TestTTLSemantics(t *testing.T) {
	ids := []string{"none", "never", "ten", "hundred"}
	ttls := []string{"", `,"ttl":-1`, `,"ttl":10`, `,"ttl":100`}
	for _, tc := range []struct {
		name      string
		def       *int64
		at50      []string // visible 50 s after the writes
		at5000000 []string // and long after
	}{
		{"off", nil, ids, ids},
		{"on without a default", ptr(-1), []string{"hundred", "never", "none"}, []string{"never", "none"}},
		{"30 s by default", ptr(30), []string{"hundred", "never"}, []string{"never"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := ttlContainer(t, tc.def)
			for i, id := range ids {
				if err := ttlPut(t, c, OpCreate, id, ttls[i]); err != nil {
					t.Fatal(err)
				}
			}
			all := slices.Sorted(slices.Values(ids))
			r, q, f, ch := visible(t, c, ids)
			for _, got := range [][]string{r, q, f, ch} {
				if !slices.Equal(got, all) {
					t.Fatalf("right after the writes: %v, want %v", got, all)
				}
			}
			for _, step := range []struct {
				at   time.Duration
				want []string
			}{{50 * time.Second, tc.at50}, {5_000_000 * time.Second, tc.at5000000}} {
				clk.Set(time.Unix(1_800_000_000, 0).Add(step.at))
				want := slices.Sorted(slices.Values(step.want))
				r, q, f, ch := visible(t, c, ids)
				for i, got := range [][]string{r, q, f, ch} {
					if !slices.Equal(got, want) {
						t.Fatalf("at +%v, %s: %v, want %v", step.at, []string{"reads", "query", "read feed", "change feed"}[i], got, want)
					}
				}
			}
		})
	}
}

// TestTTLWrites: invalid ttl values are refused with the service's
// message; an expired item can be created again, and cannot be replaced,
// patched or deleted; the sweep deletes expired items (and their change
// entries), a bounded number per tick.
func TestTTLWrites(t *testing.T) {
	c, clk := ttlContainer(t, ptr(10))
	for _, bad := range []string{`,"ttl":0`, `,"ttl":-2`, `,"ttl":1.5`, `,"ttl":"10"`, `,"ttl":null`, `,"ttl":2147483648`, `,"ttl":true`} {
		err := ttlPut(t, c, OpCreate, "bad", bad)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "The input ttl") || !strings.Contains(err.Error(), "is invalid") {
			t.Errorf("ttl %s: %v, want the service's 400", bad, err)
		}
	}
	if err := ttlPut(t, c, OpCreate, "ok", `,"ttl":2147483647`); err != nil {
		t.Fatalf("the largest ttl: %v", err)
	}
	if err := ttlPut(t, c, OpCreate, "x", ""); err != nil {
		t.Fatal(err)
	}
	// A patch that sets an invalid ttl is refused too.
	op, _ := c.PrepareKeyed(OpPatch, "x", key("p"), true)
	op.Patch = mustPatch(t, `[{"op":"set","path":"/ttl","value":0}]`)
	if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || !errors.Is(res[0].Err, ErrBadRequest) {
		t.Fatalf("patching ttl to 0: %v %v", err, res[0].Err)
	}
	clk.Add(11 * time.Second)
	if err := ttlPut(t, c, OpReplace, "x", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("replacing an expired item: %v, want not found", err)
	}
	if err := ttlPut(t, c, OpCreate, "x", `,"again":true`); err != nil {
		t.Fatalf("creating an expired item again: %v", err)
	}
	clk.Add(11 * time.Second)
	del, _ := c.PrepareKeyed(OpDelete, "x", key("p"), true)
	if res, _, err := c.Execute(&Command{Ops: []Op{del}}, ""); err != nil || !errors.Is(res[0].Err, ErrNotFound) {
		t.Fatalf("deleting an expired item: %v %v", err, res)
	}

	// The sweep: 250 items expire; each tick deletes at most ttlSweepDeletes.
	for i := range 250 {
		if err := ttlPut(t, c, OpCreate, fmt.Sprint("s", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(time.Minute)
	total := 0
	for tick := 0; ; tick++ {
		n, err := c.SweepExpired()
		if err != nil {
			t.Fatal(err)
		}
		if n > ttlSweepDeletes {
			t.Fatalf("a tick deleted %d, more than %d", n, ttlSweepDeletes)
		}
		total += n
		if n == 0 && tick > 0 {
			break
		}
		if tick > 10 {
			t.Fatal("the sweep does not finish")
		}
	}
	if total != 250 {
		t.Fatalf("swept %d, want 250 (the item with the largest ttl stays)", total)
	}
	left := 0
	for _, span := range [][2][]byte{spanOf(storage.ContainerItemsSpan(c.rid)), spanOf(storage.ContainerChangesSpan(c.rid))} {
		if err := c.e.store.Iterate(span[0], span[1], func(_, _ []byte) (bool, error) { left++; return true, nil }); err != nil {
			t.Fatal(err)
		}
	}
	if left != 2 {
		t.Fatalf("%d items and change entries left, want the item \"ok\" and its entry", left)
	}
}

func spanOf(lo, hi []byte) [2][]byte { return [2][]byte{lo, hi} }

func mustPatch(t *testing.T, ops string) []jsondoc.PatchOp {
	t.Helper()
	_, p, err := jsondoc.ParsePatch([]byte(`{"operations":` + ops + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTTLInProcedures: a stored procedure does not see expired items, and
// may create an expired item's id again.
func TestTTLInProcedures(t *testing.T) {
	c, clk := ttlContainer(t, ptr(10))
	if err := ttlPut(t, c, OpCreate, "old", ""); err != nil {
		t.Fatal(err)
	}
	if err := ttlPut(t, c, OpCreate, "kept", `,"ttl":-1`); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateScript(StoredProcedure, ScriptSpec{ID: "look", Body: `function () {
		var coll = getContext().getCollection(), seen = [];
		coll.readDocument(coll.getSelfLink() + "docs/old", function (err) { seen.push(err ? "old:missing" : "old:found"); });
		coll.queryDocuments(coll.getSelfLink(), "SELECT VALUE c.id FROM c", function (err, ids) {
			seen.push("query:" + ids.join(","));
			coll.createDocument(coll.getSelfLink(), {id: "old", pk: "p", again: true}, function (err) {
				seen.push(err ? "create:" + err.message : "create:ok");
				getContext().getResponse().setBody(seen.join(" "));
			});
		});
	}`}); err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Minute)
	res, err := c.ExecuteProcedure("look", key("p"), true, []byte(`[]`), ScriptEnv{})
	if err != nil || string(res.Body) != `"old:missing query:kept create:ok"` {
		t.Fatalf("procedure: %s, %v", res.Body, err)
	}
	op, _ := c.PrepareKeyed(OpRead, "old", key("p"), true)
	if r, _, err := c.ReadItem(op); err != nil || !strings.Contains(string(r.Doc), `"again":true`) {
		t.Fatalf("the item the procedure created again: %s, %v", r.Doc, err)
	}
}
