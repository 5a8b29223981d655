package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/testclock"
)

// cfModel is what the change feed must show: for every live item its
// latest version and the order of the last writes.
type cfModel struct {
	clock int              // counts writes
	items map[string]cfRec // live items by id
}

type cfRec struct {
	epk       string
	v         int // the version written last (the body's "v")
	writtenAt int // cfModel.clock at that write
}

type cfDoc struct {
	ID string `json:"id"`
	V  int    `json:"v"`
}

// readFeed reads a scope's feed from after to its end, in pages of n.
func readFeed(t *testing.T, c *Container, scope ChangeFeedScope, start ChangeFeedStart, n int) ([]cfDoc, uint64) {
	t.Helper()
	var out []cfDoc
	for {
		pg, err := c.ChangeFeed(scope, start, n)
		if err != nil {
			t.Fatalf("change feed of %+v from %+v: %v", scope, start, err)
		}
		for _, d := range pg.Docs {
			var x cfDoc
			if err := json.Unmarshal(d, &x); err != nil {
				t.Fatal(err)
			}
			out = append(out, x)
		}
		if pg.Position < start.After {
			t.Fatalf("the position went back from %d to %d", start.After, pg.Position)
		}
		if len(pg.Docs) == 0 && pg.Position == start.After && !start.FromNow {
			return out, pg.Position
		}
		start = ChangeFeedStart{After: pg.Position}
	}
}

// want is what a read of the EPK range [lo, hi) must return of the items
// written after clock `after`: the live ones, each once, in the order of
// their last write, in their latest version.
func (m *cfModel) want(lo, hi string, after int) []cfDoc {
	type w struct {
		d  cfDoc
		at int
	}
	var ws []w
	for id, r := range m.items {
		if r.writtenAt > after && r.epk >= lo && (hi == "" || r.epk < hi) {
			ws = append(ws, w{cfDoc{id, r.v}, r.writtenAt})
		}
	}
	slices.SortFunc(ws, func(a, b w) int { return a.at - b.at })
	out := make([]cfDoc, len(ws))
	for i, x := range ws {
		out[i] = x.d
	}
	return out
}

// TestChangeFeedAgainstAModel drives random upserts and deletes with splits
// in between, and checks every range's feed from the beginning, and feeds
// continued across splits from positions taken before them, against a
// model: each live item once, in the order of its last write, in its
// latest version.
func TestChangeFeedAgainstAModel(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 7))
			e, st := testEngine(t, "")
			defer st.Close()
			defer e.Close()
			c := mustContainer(t, e, 400)
			m := &cfModel{items: map[string]cfRec{}}
			step := func() {
				id := fmt.Sprint("i", rng.IntN(60))
				pk := fmt.Sprint("k", rng.IntN(15))
				if r, ok := m.items[id]; ok && rng.IntN(4) == 0 {
					op, err := c.PrepareKeyed(OpDelete, id, key(pkOf(t, c, id, r)), true)
					if err != nil {
						t.Fatal(err)
					}
					if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
						t.Fatalf("delete %s: %v %v", id, err, res[0].Err)
					}
					delete(m.items, id)
					return
				}
				if r, ok := m.items[id]; ok {
					pk = pkOf(t, c, id, r) // an id stays in its key
				}
				m.clock++
				body := fmt.Sprintf(`{"id":%q,"pk":%q,"v":%d}`, id, pk, m.clock)
				op, err := c.PrepareWrite(OpUpsert, []byte(body), key(pk), true)
				if err != nil {
					t.Fatal(err)
				}
				if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
					t.Fatalf("upsert %s: %v %v", id, err, res)
				}
				m.items[id] = cfRec{epk: op.EPK, v: m.clock, writtenAt: m.clock}
			}
			for range 150 {
				step()
			}
			// Positions at the end of every current range, taken now.
			type mark struct {
				lo, hi string
				pos    uint64
				clock  int
			}
			var marks []mark
			for _, p := range c.Partitions() {
				got, pos := readFeed(t, c, ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{}, 1+rng.IntN(9))
				if want := m.want(p.info.Min, openMax(p.info.Max), 0); !slices.Equal(got, want) {
					t.Fatalf("range %s from the beginning:\n got %v\nwant %v", p.ID(), got, want)
				}
				marks = append(marks, mark{p.info.Min, openMax(p.info.Max), pos, m.clock})
			}
			// More writes, with splits among them.
			for round := range 3 {
				for range 60 {
					step()
				}
				parts := c.Partitions()
				if _, err := c.splitForStorage(parts[rng.IntN(len(parts))]); err != nil {
					t.Fatalf("split in round %d: %v", round, err)
				}
			}
			for range 40 {
				step()
			}
			// Every current range from the beginning.
			for _, p := range c.Partitions() {
				got, _ := readFeed(t, c, ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{}, 1+rng.IntN(9))
				if want := m.want(p.info.Min, openMax(p.info.Max), 0); !slices.Equal(got, want) {
					t.Fatalf("range %s (parents %v) from the beginning:\n got %v\nwant %v", p.ID(), p.info.Parents, got, want)
				}
			}
			// Every old position, continued on the ranges that now cover its
			// part of the hash space (as the SDKs do after a 410), clamped
			// to that part with the EPK bounds of a feed range.
			for _, mk := range marks {
				for _, p := range c.Partitions() {
					lo, hi := max(mk.lo, p.info.Min), openMax(p.info.Max)
					if mk.hi != "" && (hi == "" || mk.hi < hi) {
						hi = mk.hi
					}
					if hi != "" && lo >= hi {
						continue
					}
					scope := ChangeFeedScope{RangeID: p.ID(), MinEPK: lo, MaxEPK: hi}
					got, _ := readFeed(t, c, scope, ChangeFeedStart{After: mk.pos}, 1+rng.IntN(9))
					if want := m.want(lo, hi, mk.clock); !slices.Equal(got, want) {
						t.Fatalf("range %s [%s, %s) after %d:\n got %v\nwant %v", p.ID(), lo, hi, mk.pos, got, want)
					}
				}
			}
		})
	}
}

// pkOf reads the partition key of a live item from its document.
func pkOf(t *testing.T, c *Container, id string, r cfRec) string {
	t.Helper()
	lo, hi := r.epk, r.epk+"\x01"
	for _, p := range c.Partitions() {
		if p.info.Min <= lo && (p.info.Max == "FF" || lo < p.info.Max) {
			pg, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID(), MinEPK: lo, MaxEPK: hi}, ChangeFeedStart{}, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range pg.Docs {
				var x struct {
					ID string `json:"id"`
					PK string `json:"pk"`
				}
				_ = json.Unmarshal(d, &x)
				if x.ID == id {
					return x.PK
				}
			}
		}
	}
	t.Fatalf("item %s not found in the change feed at %s", id, r.epk)
	return ""
}

// TestChangeFeedStarts: from now sees only later changes; from a time only
// versions written at or after it; by partition key only that key; a range
// that has split answers ErrPartitionGone; a container of several ranges
// needs a range or a key.
func TestChangeFeedStarts(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	e, st := testEngineOpts(t, "", Options{Now: clk.Now, NoThrottle: true})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	p := c.Partitions()[0]
	for i := range 5 {
		if _, err := write(t, c, fmt.Sprint("k", i%2), fmt.Sprint("a", i), 5); err != nil {
			t.Fatal(err)
		}
	}
	now, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{FromNow: true}, 10)
	if err != nil || len(now.Docs) != 0 {
		t.Fatalf("from now: %d docs, %v", len(now.Docs), err)
	}
	clk.Add(10 * time.Second)
	for i := range 3 {
		if _, err := write(t, c, "k0", fmt.Sprint("b", i), 5); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(pg ChangeFeedPage) []string {
		var out []string
		for _, d := range pg.Docs {
			var x cfDoc
			_ = json.Unmarshal(d, &x)
			out = append(out, x.ID)
		}
		return out
	}
	later, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{After: now.Position}, 10)
	if err != nil || !slices.Equal(ids(later), []string{"b0", "b1", "b2"}) {
		t.Fatalf("after the position taken from now: %v, %v", ids(later), err)
	}
	since, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{Since: clk.Now().Unix()}, 10)
	if err != nil || !slices.Equal(ids(since), []string{"b0", "b1", "b2"}) {
		t.Fatalf("since the second batch's time: %v, %v", ids(since), err)
	}
	byKey, err := c.ChangeFeed(ChangeFeedScope{Key: key("k1"), HasKey: true}, ChangeFeedStart{}, 10)
	if err != nil || !slices.Equal(ids(byKey), []string{"a1", "a3"}) {
		t.Fatalf("by key k1: %v, %v", ids(byKey), err)
	}
	if _, err := c.splitForStorage(p); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ChangeFeed(ChangeFeedScope{RangeID: p.ID()}, ChangeFeedStart{}, 10); !errors.Is(err, ErrPartitionGone) {
		t.Fatalf("the split range: %v, want ErrPartitionGone", err)
	}
	if _, err := c.ChangeFeed(ChangeFeedScope{}, ChangeFeedStart{}, 10); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("no range on two ranges: %v, want ErrBadRequest", err)
	}
	byKey2, err := c.ChangeFeed(ChangeFeedScope{Key: key("k1"), HasKey: true}, ChangeFeedStart{}, 10)
	if err != nil || !slices.Equal(ids(byKey2), []string{"a1", "a3"}) {
		t.Fatalf("by key k1 after the split: %v, %v", ids(byKey2), err)
	}
}

// TestAllVersionsAndDeletes: a container with a change feed policy keeps
// every version and every delete, which the all-versions feed returns in
// order from a position taken before them; the log is trimmed past its
// retention; a container without a policy, or a start from the beginning,
// is refused.
func TestAllVersionsAndDeletes(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	e, st := testEngineOpts(t, "", Options{Now: clk.Now, NoThrottle: true, TTLSweepInterval: -1})
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	policy := map[string]json.RawMessage{"changeFeedPolicy": json.RawMessage(`{"retentionDuration": 10}`)}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), Extra: policy}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	all := ChangeFeedScope{RangeID: "0", AllVersions: true}
	if _, err := c.ChangeFeed(all, ChangeFeedStart{}, 10); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("from the beginning: %v, want a 400", err)
	}
	now, err := c.ChangeFeed(all, ChangeFeedStart{FromNow: true}, 10)
	if err != nil || len(now.Docs) != 0 {
		t.Fatalf("from now: %v %v", now.Docs, err)
	}
	run := func(kind OpKind, id, body string) {
		t.Helper()
		var op Op
		var err error
		if body == "" {
			op, err = c.PrepareKeyed(kind, id, key("p"), true)
		} else {
			op, err = c.PrepareWrite(kind, []byte(body), key("p"), true)
		}
		if err != nil {
			t.Fatal(err)
		}
		if res, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil || res[0].Err != nil {
			t.Fatalf("%v %s: %v %v", kind, id, err, res)
		}
	}
	run(OpCreate, "a", `{"id":"a","pk":"p","v":1}`)
	run(OpUpsert, "a", `{"id":"a","pk":"p","v":2}`)
	run(OpCreate, "b", `{"id":"b","pk":"p","v":1}`)
	run(OpDelete, "a", "")
	pg, err := c.ChangeFeed(all, ChangeFeedStart{After: now.Position}, 10)
	if err != nil {
		t.Fatal(err)
	}
	type event struct {
		Current  map[string]any `json:"current"`
		Previous map[string]any `json:"previous"`
		Metadata struct {
			Op   string `json:"operationType"`
			LSN  uint64 `json:"lsn"`
			Prev uint64 `json:"previousImageLSN"`
			ID   string `json:"id"`
		} `json:"metadata"`
	}
	var got []string
	var evs []event
	for _, d := range pg.Docs {
		var ev event
		if err := json.Unmarshal(d, &ev); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		evs = append(evs, ev)
		switch ev.Metadata.Op {
		case "delete":
			got = append(got, fmt.Sprintf("delete %s (was v%v)", ev.Metadata.ID, ev.Previous["v"]))
		default:
			got = append(got, fmt.Sprintf("%s %v v%v", ev.Metadata.Op, ev.Current["id"], ev.Current["v"]))
		}
	}
	want := []string{"create a v1", "replace a v2", "create b v1", "delete a (was v2)"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if evs[1].Metadata.Prev != evs[0].Metadata.LSN || evs[3].Metadata.Prev != evs[1].Metadata.LSN {
		t.Fatalf("previous image LSNs: %+v", evs)
	}
	// The latest-version feed of the same range holds only b.
	latest, _ := readFeed(t, c, ChangeFeedScope{RangeID: "0"}, ChangeFeedStart{}, 10)
	if len(latest) != 1 || latest[0].ID != "b" {
		t.Fatalf("latest versions: %v", latest)
	}
	// Past the retention (10 minutes) the log is trimmed.
	if n, err := c.TrimVersions(); err != nil || n != 0 {
		t.Fatalf("trim within the retention: %d, %v", n, err)
	}
	clk.Add(11 * time.Minute)
	if n, err := c.TrimVersions(); err != nil || n != 4 {
		t.Fatalf("trim past the retention: %d, %v", n, err)
	}
	if pg, err := c.ChangeFeed(all, ChangeFeedStart{After: now.Position}, 10); err != nil || len(pg.Docs) != 0 {
		t.Fatalf("after the trim: %d events, %v", len(pg.Docs), err)
	}
	// A container without a policy keeps nothing and refuses the mode.
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "plain", PartitionKey: hashDef("/pk")}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c2, _ := e.Container("db", "plain")
	if _, err := c2.ChangeFeed(ChangeFeedScope{RangeID: "0", AllVersions: true}, ChangeFeedStart{FromNow: true}, 10); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("no policy: %v", err)
	}
}

// TestAllVersionsMarksExpiry: the deletes of expired items, by the sweep
// and before a write, come in the all-versions feed marked
// timeToLiveExpired; a client's delete does not.
func TestAllVersionsMarksExpiry(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	e, st := testEngineOpts(t, "", Options{Now: clk.Now, NoThrottle: true, TTLSweepInterval: -1})
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	ttl := int64(10)
	policy := map[string]json.RawMessage{"changeFeedPolicy": json.RawMessage(`{"retentionDuration": 60}`)}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk"), DefaultTTL: &ttl, Extra: policy}, Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "c")
	all := ChangeFeedScope{RangeID: "0", AllVersions: true}
	now, err := c.ChangeFeed(all, ChangeFeedStart{FromNow: true}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"swept", "rewritten", "deleted"} {
		if err := ttlPut(t, c, OpCreate, id, ""); err != nil {
			t.Fatal(err)
		}
	}
	del, _ := c.PrepareKeyed(OpDelete, "deleted", key("p"), true)
	if res, _, err := c.Execute(&Command{Ops: []Op{del}}, ""); err != nil || res[0].Err != nil {
		t.Fatalf("delete: %v %v", err, res)
	}
	clk.Add(time.Minute)
	if err := ttlPut(t, c, OpCreate, "rewritten", `,"again":true`); err != nil {
		t.Fatal(err)
	}
	if n, err := c.SweepExpired(); err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v", n, err)
	}
	pg, err := c.ChangeFeed(all, ChangeFeedStart{After: now.Position}, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range pg.Docs {
		var ev struct {
			Metadata struct {
				Op      string `json:"operationType"`
				ID      string `json:"id"`
				Expired bool   `json:"timeToLiveExpired"`
			} `json:"metadata"`
			Current struct{ ID string } `json:"current"`
		}
		if err := json.Unmarshal(d, &ev); err != nil {
			t.Fatal(err)
		}
		id := ev.Current.ID
		if ev.Metadata.Op == "delete" {
			id = ev.Metadata.ID
		}
		got = append(got, fmt.Sprintf("%s %s %v", ev.Metadata.Op, id, ev.Metadata.Expired))
	}
	want := []string{"create swept false", "create rewritten false", "create deleted false", "delete deleted false",
		"delete rewritten true", "create rewritten false", "delete swept true"}
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}
