package advise

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Problem names, as they appear in CandidateReport.Problems.
const (
	ProblemUneven     = "uneven-current-writes"
	ProblemThrottle   = "throttling-risk"
	ProblemLimit      = "logical-partition-limit"
	ProblemFewValues  = "fewer-values-than-partitions"
	ProblemFailedKeys = "documents-without-key"
)

// severity weighs a candidate's problems for the ranking: the spread of
// current writes, the 429 risk and the 20 GB limit count 1 each (0.5 for a
// medium risk). Fewer values than partitions and documents without a key
// count 0.25.
func severity(c *CandidateReport) float64 {
	s := 0.0
	for _, p := range c.Problems {
		switch p {
		case ProblemUneven:
			s++
		case ProblemThrottle:
			s += map[string]float64{"high": 1, "medium": 0.5}[c.Throttle.Risk]
		case ProblemLimit:
			s += map[string]float64{"now": 1, "high": 1, "medium": 0.5}[c.LogicalLimit.Risk]
		default:
			s += 0.25
		}
	}
	return s
}

// rank finds each candidate's problems, writes its reasons, and sorts the
// candidates best first:
//
//  1. by severity (no problem first: even current writes, no 429 risk, no
//     20 GB problem);
//  2. with a workload, by the share of operations that fan out (to 1%);
//  3. without a workload, a key with a random suffix after one without (its
//     point reads must try every suffix);
//  4. by the busiest partition's share of current writes relative to the
//     fair share (to 0.1), then the RU and storage skew (max/mean, to 0.05);
//  5. more distinct values first, then the expression text.
func rank(rep *Report) {
	for i := range rep.Candidates {
		c := &rep.Candidates[i]
		c.Problems = problems(rep, c)
		c.Reasons = reasons(rep, c)
	}
	bucket := func(x, step float64) float64 { return math.Round(x/step) * step }
	random := func(c *CandidateReport) int {
		if c.RandomSuffix != nil && len(rep.Workload) == 0 {
			return 1
		}
		return 0
	}
	fanOut := func(c *CandidateReport) float64 {
		if c.Queries == nil {
			return 0
		}
		return bucket(c.Queries.FanOutShare, 0.01)
	}
	slices.SortStableFunc(rep.Candidates, func(a, b CandidateReport) int {
		na := float64(len(a.Partitions))
		nb := float64(len(b.Partitions))
		return cmp.Or(
			cmp.Compare(severity(&a), severity(&b)),
			cmp.Compare(fanOut(&a), fanOut(&b)),
			cmp.Compare(random(&a), random(&b)),
			cmp.Compare(bucket(a.HottestPartitionShare*na, 0.1), bucket(b.HottestPartitionShare*nb, 0.1)),
			cmp.Compare(bucket(a.RUSkew.MaxOverMean, 0.05), bucket(b.RUSkew.MaxOverMean, 0.05)),
			cmp.Compare(bucket(a.StorageSkew.MaxOverMean, 0.05), bucket(b.StorageSkew.MaxOverMean, 0.05)),
			cmp.Compare(b.DistinctValues, a.DistinctValues),
			cmp.Compare(a.Key, b.Key),
		)
	})
	for i := range rep.Candidates {
		c := &rep.Candidates[i]
		c.Rank = i + 1
		c.Summary = summary(c)
	}
}

func problems(rep *Report, c *CandidateReport) []string {
	out := []string{}
	n := len(c.Partitions)
	if n > 1 && c.HottestPartitionShare > c.CurrentWrites.EvenShareLimit {
		out = append(out, ProblemUneven)
	}
	if c.Throttle.Risk == "high" || c.Throttle.Risk == "medium" {
		out = append(out, ProblemThrottle)
	}
	switch c.LogicalLimit.Risk {
	case "now", "high", "medium":
		out = append(out, ProblemLimit)
	}
	if c.DistinctValues < n {
		out = append(out, ProblemFewValues)
	}
	if c.FailedItems > 0 {
		out = append(out, ProblemFailedKeys)
	}
	return out
}

func pct(x float64) string {
	switch {
	case x > 0 && x < 0.001:
		return "<0.1%"
	case x < 0.1 && x != 0:
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

// num writes a quantity for people: thousands separators, a few significant
// digits for small values.
func num(x float64) string {
	switch {
	case x == 0:
		return "0"
	case math.Abs(x) >= 100:
		return thousands(int(math.Round(x)))
	case math.Abs(x) >= 10:
		return fmt.Sprintf("%.1f", x)
	case math.Abs(x) >= 0.01:
		return fmt.Sprintf("%.2f", x)
	}
	return fmt.Sprintf("%.2g", x)
}

// bytesText writes a byte count with a decimal unit.
func bytesText(b float64) string {
	switch {
	case b >= 1e12:
		return fmt.Sprintf("%.1f TB", b/1e12)
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f KB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

// daysText writes a duration in days for people.
func daysText(d float64) string {
	switch {
	case d < 1.0/24:
		return fmt.Sprintf("%.0f minutes", d*24*60)
	case d < 2:
		return fmt.Sprintf("%.1f hours", d*24)
	case d < 365*2:
		return fmt.Sprintf("%.0f days", d)
	case d < 365*1000:
		return fmt.Sprintf("%.0f years", d/365)
	}
	return "more than 1,000 years"
}

func partitionName(c *CandidateReport, index int) string {
	return fmt.Sprintf("partition %d of %d", index, len(c.Partitions))
}

func reasons(rep *Report, c *CandidateReport) []string {
	var out []string
	n := len(c.Partitions)
	cw := c.CurrentWrites
	fair := 1 / float64(n)
	hotPart := partitionName(c, cw.HottestPartitionIndex)
	uneven := slices.Contains(c.Problems, ProblemUneven)

	// Current writes.
	switch {
	case uneven && cw.DistinctKeys == 1:
		lead := "one key"
		if c.Monotonic {
			lead = "monotonic"
		}
		out = append(out, fmt.Sprintf("%s: %s of current writes go to one logical partition (%s) on %s",
			lead, pct(cw.HottestKeyShare), cw.HottestKey, hotPart))
	case uneven && c.Monotonic:
		out = append(out, fmt.Sprintf("monotonic: current writes go to only %s keys; %s takes %s of them (fair share %s), the newest key %s alone %s",
			thousands(cw.DistinctKeys), hotPart, pct(cw.HottestPartitionShare), pct(fair), cw.HottestKey, pct(cw.HottestKeyShare)))
	case uneven:
		out = append(out, fmt.Sprintf("uneven: %s takes %s of current writes (fair share %s); the hottest key %s takes %s",
			hotPart, pct(cw.HottestPartitionShare), pct(fair), cw.HottestKey, pct(cw.HottestKeyShare)))
	case n == 1:
		out = append(out, fmt.Sprintf("one physical partition takes every write; current writes spread over %s keys (give --partitions or --throughput to compare spreads)",
			thousands(cw.DistinctKeys)))
	default:
		lead := "even"
		if c.Monotonic {
			lead = "monotonic in key order but even"
		}
		out = append(out, fmt.Sprintf("%s: current writes spread over %s keys on %d of %d partitions; the busiest takes %s (fair share %s)",
			lead, thousands(cw.DistinctKeys), cw.PartitionsWritten, n, pct(cw.HottestPartitionShare), pct(fair)))
	}

	// 429s.
	t := c.Throttle
	ceiling := ""
	if t.MaxWriteRate > 0 {
		ceiling = fmt.Sprintf("429s start at about %s writes/s", num(t.MaxWriteRate))
		if t.EvenMaxWriteRate > 0 && n > 1 {
			ceiling += fmt.Sprintf(" (an even spread would allow %s/s)", num(t.EvenMaxWriteRate))
		}
	}
	switch t.Risk {
	case "unknown":
		s := "429 risk unknown: no write rate (give --growth, a workload, or documents with _ts)"
		if ceiling != "" {
			s += "; " + ceiling
		}
		out = append(out, s)
	case "high", "medium":
		s := fmt.Sprintf("429 risk (%s): the busiest partition needs %s RU/s of its %s RU/s budget at %s writes/s",
			t.Risk, num(t.HottestPartitionRU), num(t.BudgetRU), num(rep.WriteRate))
		if t.HotKeyOverPartition {
			s += fmt.Sprintf("; the hottest key alone needs %s RU/s, more than one partition serves (%s RU/s), so no throughput fixes it",
				num(t.HottestKeyRU), num(PartitionMaxRU))
		}
		out = append(out, s)
	default:
		s := fmt.Sprintf("no 429 risk: the busiest partition needs %s RU/s of its %s RU/s budget", num(t.HottestPartitionRU), num(t.BudgetRU))
		if ceiling != "" {
			s += "; " + ceiling
		}
		out = append(out, s)
	}

	// 20 GB.
	l := c.LogicalLimit
	switch {
	case l.Risk == "now":
		out = append(out, fmt.Sprintf("20 GB: %s already holds %s; writes to it fail", l.LargestKey, bytesText(float64(l.LargestKeyBytes))))
	case l.Risk == "unknown":
		out = append(out, fmt.Sprintf("20 GB: growth unknown (give --growth or documents with _ts); the largest key %s holds %s (%s of 20 GB)",
			l.LargestKey, bytesText(float64(l.LargestKeyBytes)), pct(l.LargestKeyShare)))
	case l.DaysTo20GB != nil:
		out = append(out, fmt.Sprintf("20 GB: %s reaches 20 GB in %s at %s/day of growth", l.FirstKeyTo20GB, daysText(*l.DaysTo20GB),
			bytesText(rep.Growth.BytesPerDay)))
	case l.KeyLifetimeDays > 0:
		out = append(out, fmt.Sprintf("20 GB: never reached: each key receives writes for about %s and ends near %s",
			daysText(l.KeyLifetimeDays), bytesText(l.ProjectedMaxBytes)))
	default:
		out = append(out, "20 GB: never reached (no key grows)")
	}

	// Queries.
	if q := c.Queries; q != nil {
		s := fmt.Sprintf("queries: %s of reads and queries single-partition", pct(q.SinglePartitionShare))
		if q.FanOutRU > 0 {
			s += fmt.Sprintf("; fan-out adds %s RU/s", num(q.FanOutRU))
		}
		var worst *OpRoute
		for i := range q.Operations {
			o := &q.Operations[i]
			if o.Routing != "single" && (worst == nil || o.Rate*o.PartitionsTouched > worst.Rate*worst.PartitionsTouched) {
				worst = o
			}
		}
		if worst != nil {
			switch worst.Routing {
			case "keys":
				s += fmt.Sprintf("; %q tries %d keys on %s partitions", worst.Name, worst.Keys, num(worst.PartitionsTouched))
			case "prefix":
				s += fmt.Sprintf("; %q is routed by a key prefix to %s partitions", worst.Name, num(worst.PartitionsTouched))
			default:
				s += fmt.Sprintf("; %q queries all %d partitions", worst.Name, n)
			}
		}
		out = append(out, s)
	} else if c.RandomSuffix != nil {
		out = append(out, fmt.Sprintf("random suffix: a reader who knows the other values must try all %d keys (give a workload to weigh this)", c.RandomSuffix.Keys))
	}

	// The rest.
	if c.DistinctValues < n {
		out = append(out, fmt.Sprintf("only %s distinct values for %d partitions: some partitions stay empty", thousands(c.DistinctValues), n))
	}
	if n > 1 && c.StorageSkew.MaxOverMean >= 1.5 {
		out = append(out, fmt.Sprintf("storage uneven: the fullest partition holds %.1f× the mean (Gini %.2f)", c.StorageSkew.MaxOverMean, c.StorageSkew.Gini))
	}
	if c.FailedItems > 0 {
		out = append(out, fmt.Sprintf("%s documents have no key under this expression (%s)", thousands(c.FailedItems), c.FailedExample))
	}
	if c.UndefinedItems > 0 {
		out = append(out, fmt.Sprintf("%s documents lack a key property and share the undefined key", thousands(c.UndefinedItems)))
	}
	if c.Current {
		var total, top float64
		var throttled uint64
		topID := ""
		for _, p := range c.Partitions {
			total += p.ObservedRU
			throttled += p.ObservedThrottled
			if p.ObservedRU > top {
				top, topID = p.ObservedRU, p.ID
			}
		}
		var hot KeyWeight
		for _, o := range rep.Observed {
			for _, k := range o.TopKeysByRU {
				if k.Weight > hot.Weight {
					hot = k
				}
			}
		}
		s := "the container's current key"
		if total > 0 {
			s += fmt.Sprintf("; recorded: range %s consumed %s of the request units, %s 429s in all", topID, pct(top/total), thousands(int(throttled)))
		}
		if hot.Key != "" {
			s += fmt.Sprintf("; hottest key by recent RU: %s (%s RU)", hot.Key, num(hot.Weight))
		}
		out = append(out, s)
	}
	return out
}

func summary(c *CandidateReport) string {
	var bad []string
	for _, p := range c.Problems {
		switch p {
		case ProblemUneven:
			if c.Monotonic {
				bad = append(bad, "monotonic hot spot")
			} else {
				bad = append(bad, "uneven writes")
			}
		case ProblemThrottle:
			bad = append(bad, c.Throttle.Risk+" 429 risk")
		case ProblemLimit:
			bad = append(bad, "20 GB limit")
		case ProblemFewValues:
			bad = append(bad, "too few values")
		case ProblemFailedKeys:
			bad = append(bad, "documents without a key")
		}
	}
	if len(bad) == 0 {
		s := "even writes, no 429 risk, no 20 GB problem"
		if c.Queries != nil {
			s += fmt.Sprintf(", %s of reads single-partition", pct(c.Queries.SinglePartitionShare))
		}
		return s
	}
	return strings.Join(bad, ", ")
}
