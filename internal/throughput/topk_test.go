package throughput

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

// stream returns n weighted events over nkeys keys: key ranks drawn from
// Zipf(s) (uniform when s is 0), weights uniform in [1, 20) like request
// charges, and the exact total per key.
func stream(seed uint64, n, nkeys int, s float64) (keys []string, weights []float64, exact map[string]float64) {
	rng := rand.New(rand.NewPCG(seed, 42))
	names := make([]string, nkeys)
	for i, p := range rng.Perm(nkeys) { // ranks land on arbitrary names
		names[i] = "pk-" + strconv.Itoa(p)
	}
	var z *rand.Zipf
	if s > 0 {
		z = rand.NewZipf(rng, s, 1, uint64(nkeys-1))
	}
	exact = map[string]float64{}
	for i := 0; i < n; i++ {
		var r int
		if z != nil {
			r = int(z.Uint64())
		} else {
			r = rng.IntN(nkeys)
		}
		w := 1 + 19*rng.Float64()
		keys = append(keys, names[r])
		weights = append(weights, w)
		exact[names[r]] += w
	}
	return keys, weights, exact
}

func exactTop(exact map[string]float64, n int) []Entry {
	var all []Entry
	for k, w := range exact {
		all = append(all, Entry{Key: k, Weight: w})
	}
	slices.SortFunc(all, func(a, b Entry) int {
		if a.Weight != b.Weight {
			if a.Weight > b.Weight {
				return -1
			}
			return 1
		}
		return 0
	})
	return all[:min(n, len(all))]
}

func checkBounds(t *testing.T, tk *TopK, exact map[string]float64) {
	t.Helper()
	for _, e := range tk.Top(math.MaxInt) {
		x := exact[e.Key]
		if e.Weight-e.Error > x*(1+1e-9) || x > e.Weight*(1+1e-9) || e.Error < 0 {
			t.Fatalf("%s: weight %v error %v, exact %v: bounds broken", e.Key, e.Weight, e.Error, x)
		}
	}
}

func TestTopKZipf(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		keys, weights, exact := stream(seed, 200000, 100000, 1.1)
		tk := NewTopK(10)
		total := 0.0
		for i, k := range keys {
			tk.Add(k, weights[i])
			total += weights[i]
		}
		got, want := tk.Top(10), exactTop(exact, 10)
		gotKeys, wantKeys := []string{}, []string{}
		for i := range got {
			gotKeys, wantKeys = append(gotKeys, got[i].Key), append(wantKeys, want[i].Key)
			if x := exact[got[i].Key]; math.Abs(got[i].Weight-x) > 0.05*x {
				t.Errorf("seed %d: %s reported %.1f, exact %.1f", seed, got[i].Key, got[i].Weight, x)
			}
		}
		slices.Sort(gotKeys)
		slices.Sort(wantKeys)
		if !slices.Equal(gotKeys, wantKeys) {
			t.Errorf("seed %d: top 10 %v, exact %v", seed, gotKeys, wantKeys)
		}
		if math.Abs(tk.Total()-total) > 1e-6*total {
			t.Errorf("seed %d: total %v, want %v", seed, tk.Total(), total)
		}
		checkBounds(t, tk, exact)
	}
}

func TestTopKUniform(t *testing.T) {
	keys, weights, _ := stream(7, 200000, 100000, 0)
	tk := NewTopK(10)
	exact := map[string]float64{}
	for i, k := range keys {
		tk.Add(k, weights[i])
		exact[k] += weights[i]
		if i%50000 == 0 {
			checkBounds(t, tk, exact)
		}
	}
	checkBounds(t, tk, exact)
	if top := tk.Top(10); len(top) != 10 || !slices.IsSortedFunc(top, func(a, b Entry) int {
		if a.Weight > b.Weight {
			return -1
		}
		return 0
	}) {
		t.Errorf("Top(10) = %v", top)
	}
}

func TestTopKSmall(t *testing.T) {
	tk := NewTopK(1) // 16 counters
	if tk.Top(3) != nil || tk.Total() != 0 {
		t.Fatal("a new sketch is not empty")
	}
	tk.Add("a", 5)
	tk.Add("b", 7)
	tk.Add("a", 5)
	tk.Add("c", 0)          // ignored
	tk.Add("c", -1)         // ignored
	tk.Add("c", math.NaN()) // ignored
	want := []Entry{{"a", 10, 0}, {"b", 7, 0}}
	if got := tk.Top(5); !slices.Equal(got, want) {
		t.Errorf("Top = %v, want %v", got, want)
	}
	for i := 0; i < 16; i++ { // fill the counters, then evict the smallest
		tk.Add("k"+strconv.Itoa(i), 1)
	}
	tk.Add("new", 2) // takes over a counter of weight 1
	if got := tk.Top(1)[0]; got != (Entry{"a", 10, 0}) {
		t.Errorf("Top(1) = %v", got)
	}
	for _, e := range tk.Top(100) {
		if e.Key == "new" && (e.Weight != 3 || e.Error != 1) {
			t.Errorf("evicting entry %v, want weight 3, error 1", e)
		}
	}
	if tk.Total() != 10+7+16+2 {
		t.Errorf("Total = %v", tk.Total())
	}
	tk.Decay(0.5)
	if got := tk.Top(1)[0]; got != (Entry{"a", 5, 0}) || tk.Total() != 17.5 {
		t.Errorf("after Decay(0.5): top %v, total %v", got, tk.Total())
	}
	for _, f := range []float64{0, -1, 1.5, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Decay(%v) did not panic", f)
				}
			}()
			tk.Decay(f)
		}()
	}
}

func TestTopKDecayKeepsBounds(t *testing.T) {
	keys, weights, _ := stream(3, 100000, 5000, 1.1)
	tk := NewTopK(5)
	exact := map[string]float64{}
	for i, k := range keys {
		if i%10000 == 9999 {
			tk.Decay(0.5)
			for k := range exact {
				exact[k] *= 0.5
			}
		}
		tk.Add(k, weights[i])
		exact[k] += weights[i]
	}
	checkBounds(t, tk, exact)
}

func TestTopKAddTrackedDoesNotAllocate(t *testing.T) {
	tk := NewTopK(10)
	keys := make([]string, 160)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
		tk.Add(keys[i], 1)
	}
	i := 0
	if n := testing.AllocsPerRun(1000, func() { tk.Add(keys[i%len(keys)], 1.5); i++ }); n != 0 {
		t.Errorf("Add of a tracked key allocates %v times", n)
	}
}

// TestTopKIdleIsSmall checks that a sketch nothing was added to holds no
// counters: every physical partition has one, so a server with many idle
// partitions pays only for the empty sketches.
func TestTopKIdleIsSmall(t *testing.T) {
	const n = 1000
	sketches := make([]*TopK, n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range sketches {
		sketches[i] = NewTopK(10)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256 {
		t.Errorf("an idle TopK(10) allocates %d bytes, want at most 256", per)
	}
	tk := sketches[0]
	tk.Add("a", 2)
	tk.Add("b", 1)
	if top := tk.Top(1); len(top) != 1 || top[0].Key != "a" || top[0].Weight != 2 {
		t.Errorf("Top(1) after the first Adds = %v, want [{a 2 0}]", top)
	}
}
