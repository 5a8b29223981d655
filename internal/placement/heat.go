package placement

import (
	"fmt"
	"math"
	"slices"
)

// HeatSample is one observation of a partition's consumption: At is in
// seconds on the caller's clock (the planner has none).
type HeatSample struct {
	Range  uint64
	At     int64
	RU     float64 // request units per second consumed
	Budget float64 // its budget then; 0 takes the descriptor's RUBudget
}

// History is the recent consumption of the partitions, up to Now.
type History struct {
	Now     int64
	Samples []HeatSample
}

// MaxSamples bounds a History.
const MaxSamples = 1_000_000

// HeatVerdict says what HeatSplits decided for a hot partition.
type HeatVerdict uint8

const (
	// HeatSplit: split the partition at SplitAt.
	HeatSplit HeatVerdict = iota + 1
	// HeatHotKey: one logical key alone takes more than the hot share of
	// the budget; no split can divide it.
	HeatHotKey
	// HeatNoData: hot, but the telemetry shows no split point that would
	// divide its load.
	HeatNoData
)

var verdictNames = [...]string{"", "split", "hot-key", "no-data"}

func (h HeatVerdict) String() string {
	if h > 0 && int(h) < len(verdictNames) {
		return verdictNames[h]
	}
	return fmt.Sprintf("verdict(%d)", uint8(h))
}

// HeatDecision is the decision for one partition that stayed hot.
type HeatDecision struct {
	Range   uint64
	Verdict HeatVerdict
	// SplitAt is the EPK where the children meet (HeatSplit): the left
	// child is [Min, SplitAt), the right [SplitAt, Max).
	SplitAt string
	// LeftRU and RightRU are the observed loads of the two children.
	LeftRU, RightRU float64
	// HotKey is the EPK of the logical key that cannot be split
	// (HeatHotKey).
	HotKey string
	// Reason says why, for people: the log, `parsec partitions`, the 429.
	Reason string
}

func (d HeatDecision) String() string {
	switch d.Verdict {
	case HeatSplit:
		return fmt.Sprintf("r%d split at %q (%.0f | %.0f RU/s): %s", d.Range, d.SplitAt, d.LeftRU, d.RightRU, d.Reason)
	case HeatHotKey:
		return fmt.Sprintf("r%d hot key %q: %s", d.Range, d.HotKey, d.Reason)
	}
	return fmt.Sprintf("r%d %v: %s", d.Range, d.Verdict, d.Reason)
}

// HeatSplits decides which partitions to split for heat. A partition is
// hot when every sample since the last one at or before Now-HeatWindow
// shows it consuming at least HeatShare of its budget (so the history
// must reach back a whole window). A hot partition is split at the median
// of its observed load (Partition.Load), the bucket boundary that divides
// it most evenly, not at the median of its bytes; if one logical key
// (Partition.HotKeys) alone consumes HeatShare of the budget, no split can
// help and the decision says so. Decisions come in range order.
func HeatSplits(s State, h History) ([]HeatDecision, error) {
	cfg, err := s.validate()
	if err != nil {
		return nil, err
	}
	if len(h.Samples) > MaxSamples {
		return nil, invalid("%d heat samples, more than %d", len(h.Samples), MaxSamples)
	}
	byRange := map[uint64][]HeatSample{}
	parts := map[uint64]*Partition{}
	for i := range s.Partitions {
		parts[s.Partitions[i].Range] = &s.Partitions[i]
	}
	for _, x := range h.Samples {
		if parts[x.Range] == nil {
			return nil, invalid("heat sample of unknown range %d", x.Range)
		}
		if x.RU < 0 || x.Budget < 0 || math.IsNaN(x.RU) || math.IsNaN(x.Budget) || x.At > h.Now {
			return nil, invalid("heat sample of range %d: negative, NaN or after now", x.Range)
		}
		byRange[x.Range] = append(byRange[x.Range], x)
	}
	ranges := make([]uint64, 0, len(byRange))
	for r := range byRange {
		ranges = append(ranges, r)
	}
	slices.Sort(ranges)
	var out []HeatDecision
	for _, r := range ranges {
		p := parts[r]
		ss := byRange[r]
		slices.SortStableFunc(ss, func(a, b HeatSample) int {
			switch {
			case a.At < b.At:
				return -1
			case a.At > b.At:
				return 1
			}
			return 0
		})
		start := -1
		for i, x := range ss {
			if x.At <= h.Now-cfg.HeatWindow {
				start = i
			}
		}
		if start < 0 {
			continue // not observed for a whole window yet
		}
		hot := true
		var sum, budget float64
		for _, x := range ss[start:] {
			b := x.Budget
			if b == 0 {
				b = p.RUBudget
			}
			if b <= 0 || x.RU < cfg.HeatShare*b {
				hot = false
				break
			}
			sum += x.RU
			budget = b
		}
		if !hot {
			continue
		}
		ru := sum / float64(len(ss)-start)
		out = append(out, decideHeat(p, ru, budget, cfg))
	}
	return out, nil
}

func decideHeat(p *Partition, ru, budget float64, cfg Config) HeatDecision {
	d := HeatDecision{Range: p.Range}
	sustained := fmt.Sprintf("consumed %.0f RU/s of its %.0f RU/s budget (at least %.0f%%) for %ds",
		ru, budget, cfg.HeatShare*100, cfg.HeatWindow)
	var top HotKey
	for _, k := range p.HotKeys {
		if k.Share > top.Share || k.Share == top.Share && k.EPK < top.EPK {
			top = k
		}
	}
	if top.Share > 0 && top.Share*ru >= cfg.HeatShare*budget {
		d.Verdict, d.HotKey = HeatHotKey, top.EPK
		d.Reason = fmt.Sprintf("%s, and one logical partition key takes %.0f%% of it (%.0f RU/s): a split cannot divide a single key; "+
			"spread its load over synthetic partition keys (for example the key with a suffix from 0 to N)",
			sustained, top.Share*100, top.Share*ru)
		return d
	}
	// The median of the observed load: the inner bucket boundary that
	// divides it most evenly.
	var total float64
	for _, b := range p.Load {
		if b.RU > 0 {
			total += b.RU
		}
	}
	best, bestDiff, left := "", math.Inf(1), 0.0
	var bestLeft float64
	for i, b := range p.Load {
		if b.RU > 0 {
			left += b.RU
		}
		if i == len(p.Load)-1 {
			break
		}
		at := p.Load[i+1].Min
		if at <= p.Min || (p.Max != "" && at >= p.Max) || at < b.Max {
			continue
		}
		if diff := math.Abs(total - 2*left); diff < bestDiff {
			best, bestDiff, bestLeft = at, diff, left
		}
	}
	if total <= 0 || best == "" || bestLeft == 0 || bestLeft == total {
		d.Verdict = HeatNoData
		d.Reason = sustained + ", but its load histogram shows no boundary that divides the load; waiting for finer telemetry"
		return d
	}
	d.Verdict, d.SplitAt, d.LeftRU, d.RightRU = HeatSplit, best, bestLeft/total*ru, (total-bestLeft)/total*ru
	d.Reason = fmt.Sprintf("%s; split at the median of its observed load (%.0f%% | %.0f%%), not of its bytes",
		sustained, bestLeft/total*100, (total-bestLeft)/total*100)
	return d
}
