package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/testclock"
)

func write(t *testing.T, c *Container, pk, id string, pad int) (OpResult, error) {
	t.Helper()
	op, err := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"pad":%q}`, id, pk, strings.Repeat("x", pad))), key(pk), true)
	if err != nil {
		t.Fatal(err)
	}
	res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
	if err != nil {
		return OpResult{}, err
	}
	return res[0], res[0].Err
}

// TestThrottlingIsPerPartitionAndNamesTheHotKey drives one key past its
// partition's budget with a manual clock: it gets 429s naming it, while a key
// in the other partition is never refused.
func TestThrottlingIsPerPartitionAndNamesTheHotKey(t *testing.T) {
	clk := testclock.New(time.Unix(1_800_000_000, 0))
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, Now: clk.Now})
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 2000)
	parts := c.Partitions()
	if len(parts) != 2 {
		t.Fatalf("%d partitions", len(parts))
	}
	hot, cold := "", ""
	for i := 0; hot == "" || cold == ""; i++ {
		k := fmt.Sprint("k", i)
		e, _ := c.def.EPK(key(k))
		if c.PartitionFor(e) == parts[0] && hot == "" {
			hot = k
		} else if c.PartitionFor(e) == parts[1] && cold == "" {
			cold = k
		}
	}
	var throttled *ThrottledError
	admitted := 0
	charge := 0.0
	for i := 0; i < 1000 && throttled == nil; i++ {
		r, err := write(t, c, hot, fmt.Sprint(i), 900)
		if errors.As(err, &throttled) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		admitted++
		charge = r.Charge
	}
	if throttled == nil {
		t.Fatal("1000 writes of ~1 KB at one instant never exhausted a 1,000 RU/s partition")
	}
	// The bucket holds one second of budget and the burst bank starts empty:
	// 1000 RU fit, and the request that overdraws it is still admitted.
	if want := int(1000/charge) + 1; admitted != want {
		t.Errorf("%d writes of %.2f RU admitted before the first 429, want %d", admitted, charge, want)
	}
	if throttled.HotKey != fmt.Sprintf("[%q]", hot) || throttled.RangeID != parts[0].ID() || throttled.RetryAfter <= 0 {
		t.Errorf("429 names key %s range %s retry %v; want key %s range %s", throttled.HotKey, throttled.RangeID, throttled.RetryAfter, hot, parts[0].ID())
	}
	for i := 0; i < 100; i++ {
		if _, err := write(t, c, cold, fmt.Sprint(i), 900); err != nil {
			t.Fatalf("write %d to the other partition: %v", i, err)
		}
	}
	// After the advertised retry-after, the hot key is admitted again.
	clk.Add(throttled.RetryAfter)
	if _, err := write(t, c, hot, "after", 10); err != nil {
		t.Fatalf("write after retry-after: %v", err)
	}
	stats, err := c.Stats(3)
	if err != nil {
		t.Fatal(err)
	}
	if stats[0].Throttled == 0 || stats[0].HotByRU[0].Key != fmt.Sprintf("[%q]", hot) || stats[1].Throttled != 0 {
		t.Errorf("stats: %+v", stats)
	}
	if stats[0].HotByBytes[0].Key != fmt.Sprintf("[%q]", hot) || stats[0].HotByBytes[0].Weight < 150*900 {
		t.Errorf("largest key by storage: %+v", stats[0].HotByBytes)
	}
}

func TestFixedContainerStorageCap(t *testing.T) {
	e, st := testEngineOpts(t, "", Options{PartitionMaxRUs: 1000, NoThrottle: true, FixedMaxBytes: 8 << 10, Now: time.Now})
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "f"}, Throughput{RUs: 20000}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("fixed container with 20,000 RU/s: %v, want a bad request", err)
	}
	if _, err := e.CreateContainer("db", ContainerSpec{ID: "f"}, Throughput{}); err != nil {
		t.Fatal(err)
	}
	c, _ := e.Container("db", "f")
	var err error
	n := 0
	for ; n < 100 && err == nil; n++ {
		var op Op
		op, err = c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":"%d","pad":%q}`, n, strings.Repeat("x", 1000))), nil, false)
		if err != nil {
			t.Fatal(err)
		}
		var res []OpResult
		res, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
		if err == nil {
			err = res[0].Err
		}
	}
	if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "fixed container") {
		t.Fatalf("write past the fixed container's 8 KB: %v", err)
	}
	if n < 6 || n > 9 {
		t.Errorf("the cap was hit at write %d, want about 8 KB / 1 KB", n)
	}
	if len(c.Partitions()) != 1 {
		t.Errorf("a fixed container has %d partitions", len(c.Partitions()))
	}
}

// TestTopByStorageMatchesSortedModel checks the bounded top-n selection of
// the largest logical partitions against the simple model: every key's size,
// sorted, cut to n.
func TestTopByStorageMatchesSortedModel(t *testing.T) {
	e, st := testEngineOpts(t, t.TempDir(), Options{NoThrottle: true})
	defer func() { e.Close(); st.Close() }()
	c := mustContainer(t, e, 400)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 60; i++ {
		pk := fmt.Sprintf("k%d", rng.IntN(25))
		if _, err := write(t, c, pk, fmt.Sprint(i), 10+rng.IntN(3000)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := c.Stats(1000)
	if err != nil {
		t.Fatal(err)
	}
	model := slices.Clone(all[0].HotByBytes)
	if len(model) < 10 {
		t.Fatalf("only %d logical partitions", len(model))
	}
	sort.SliceStable(model, func(i, j int) bool { return model[i].Weight > model[j].Weight })
	if !slices.Equal(model, all[0].HotByBytes) {
		t.Fatalf("all keys not largest first: %v", all[0].HotByBytes)
	}
	for _, n := range []int{0, 1, 3, 5, len(model), len(model) + 1} {
		got, err := c.Stats(n)
		if err != nil {
			t.Fatal(err)
		}
		want := model[:min(n, len(model))]
		if len(got[0].HotByBytes) != len(want) {
			t.Fatalf("top %d: %d keys, want %d", n, len(got[0].HotByBytes), len(want))
		}
		for i, kw := range got[0].HotByBytes {
			if kw.Weight != want[i].Weight {
				t.Fatalf("top %d: %v, want %v", n, got[0].HotByBytes, want)
			}
		}
	}
}
