package placement

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func heatState(p Partition) State {
	p.Range, p.Replicas, p.Leader, p.Min, p.Max = 1, []uint64{1, 2, 3}, 1, "", "FF"
	if p.RUBudget == 0 {
		p.RUBudget = 1000
	}
	return State{Members: liveNodes(3), Partitions: []Partition{p}}
}

// steady returns samples of range 1 every 10 s from 0 to now at ru.
func steady(now int64, ru float64) History {
	h := History{Now: now}
	for at := int64(0); at <= now; at += 10 {
		h.Samples = append(h.Samples, HeatSample{Range: 1, At: at, RU: ru})
	}
	return h
}

func TestHeatSplits(t *testing.T) {
	skewed := []LoadBucket{{"00", "20", 100}, {"20", "40", 100}, {"40", "50", 500}, {"50", "C0", 200}, {"C0", "FF", 100}}
	for _, tc := range []struct {
		name    string
		p       Partition
		h       History
		verdict HeatVerdict // 0: not hot
		splitAt string
		reason  string
	}{
		{name: "cool", p: Partition{Load: skewed}, h: steady(120, 700)},
		{name: "hot too briefly", p: Partition{Load: skewed}, h: steady(50, 900)},
		{name: "one dip in the window", p: Partition{Load: skewed}, h: func() History {
			h := steady(120, 900)
			h.Samples[9].RU = 500 // at 90 s
			return h
		}()},
		{name: "dip before the window", p: Partition{Load: skewed}, h: func() History {
			h := steady(120, 900)
			h.Samples[2].RU = 500 // at 20 s, before 60 s
			return h
		}(), verdict: HeatSplit},
		// The load halves inside [40,50): the nearest boundary that
		// divides it most evenly is 50 (700 | 300), where the bytes
		// median (the range's middle) would be far off.
		{name: "split at the load median", p: Partition{Load: skewed}, h: steady(120, 900),
			verdict: HeatSplit, splitAt: "50", reason: "median of its observed load (70% | 30%)"},
		{name: "budget from the sample", p: Partition{Load: skewed}, h: func() History {
			h := steady(120, 900)
			for i := range h.Samples {
				h.Samples[i].Budget = 2000
			}
			return h
		}()},
		{name: "single hot key", p: Partition{Load: skewed, HotKeys: []HotKey{{"4A", 0.2}, {"45", 0.95}}}, h: steady(120, 900),
			verdict: HeatHotKey, reason: "synthetic partition keys"},
		{name: "hot key below the share", p: Partition{Load: skewed, HotKeys: []HotKey{{"45", 0.5}}}, h: steady(120, 900),
			verdict: HeatSplit, splitAt: "50"},
		{name: "no histogram", p: Partition{}, h: steady(120, 900), verdict: HeatNoData},
		{name: "all load in one bucket", p: Partition{Load: []LoadBucket{{"00", "80", 0}, {"80", "FF", 900}}}, h: steady(120, 900),
			verdict: HeatNoData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds, err := HeatSplits(heatState(tc.p), tc.h)
			if err != nil {
				t.Fatal(err)
			}
			if tc.verdict == 0 {
				if len(ds) != 0 {
					t.Fatalf("not hot, yet %v", ds)
				}
				return
			}
			if len(ds) != 1 || ds[0].Verdict != tc.verdict || ds[0].SplitAt != tc.splitAt && tc.splitAt != "" ||
				!strings.Contains(ds[0].Reason, tc.reason) {
				t.Fatalf("got %v, want %v at %q saying %q", ds, tc.verdict, tc.splitAt, tc.reason)
			}
			d := ds[0]
			if d.Verdict == HeatSplit && math.Abs(d.LeftRU+d.RightRU-900) > 1e-6 {
				t.Fatalf("children's loads %v + %v, want 900", d.LeftRU, d.RightRU)
			}
			if d.Verdict == HeatHotKey && d.HotKey != "45" {
				t.Fatalf("hot key %q, want the hottest (45)", d.HotKey)
			}
		})
	}
}

func TestHeatSplitsRejects(t *testing.T) {
	s := heatState(Partition{})
	for name, h := range map[string]History{
		"unknown range": {Now: 10, Samples: []HeatSample{{Range: 9, At: 0}}},
		"after now":     {Now: 10, Samples: []HeatSample{{Range: 1, At: 20}}},
		"NaN":           {Now: 10, Samples: []HeatSample{{Range: 1, At: 0, RU: math.NaN()}}},
		"negative":      {Now: 10, Samples: []HeatSample{{Range: 1, At: 0, RU: -1}}},
	} {
		if _, err := HeatSplits(s, h); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}
