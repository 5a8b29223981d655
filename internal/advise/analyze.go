package advise

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/throughput"
	"github.com/parsecdb/parsec/synthkey"
)

// Limits and parameters of the method (see the package documentation).
const (
	PartitionMaxRU        = 10000   // RU/s one physical partition serves
	PartitionMaxBytes     = 50e9    // storage at which a physical partition splits
	LogicalPartitionLimit = 20e9    // storage limit of one logical partition
	WindowFraction        = 0.02    // the current window: the last 2% of the documents ...
	WindowMin             = 200     // ... and at least 200 of them
	MonotonicThreshold    = 0.7     // rank correlation from which a key is monotonic
	LimitHorizonDays      = 3 * 365 // reaching 20 GB sooner than this is a problem
	TopKeys               = 10      // keys listed per ranking
	FrequencyKeys         = 50      // keys in the frequency chart
	ProjectionDays        = 365     // growth included in the default partition count
	secondsPerDay         = 86400.0
	nominalWriteRate      = 1.0 // writes/s used for shares when no rate is known
)

// Candidate is a key to evaluate.
type Candidate struct {
	Expr       string           // the expression, as given
	Definition *epk.Definition  // nil: DefinitionFor(expression)
	Ranges     []PartitionRange // nil: EvenLayout(definition, partitions)
	Current    bool             // the container's current key (live mode)
	Proposed   string           // why it was proposed, for proposed candidates
}

// Options are the inputs of Analyze besides the documents.
type Options struct {
	Candidates        []Candidate // none: Propose
	Partitions        int         // N; 0: from Throughput, else from the projected size
	PartitionsFrom    string      // how Partitions was chosen, for the report ("--partitions" if empty)
	Throughput        float64     // T in RU/s; 0: N × 10,000 (assumed)
	PartitionBudgetRU float64     // 0: min(T/N, 10,000)
	Workload          []Operation
	Growth            Growth // zero: derived from the documents' _ts
	Seed              uint64 // seeds random(...) suffixes
	SourceName        string
	Live              bool
	Observed          []ObservedRange
	// Warnings are added to the report's: Sample.Capped for a sample that
	// kept part of the documents.
	Warnings []string
	Progress func(msg string)
}

// ExprError is an expression that does not parse (Err is the synthkey
// error, with the column) or cannot be evaluated.
type ExprError struct {
	Expr string
	Err  error
}

func (e *ExprError) Error() string { return fmt.Sprintf("candidate %q: %v", e.Expr, e.Err) }
func (e *ExprError) Unwrap() error { return e.Err }

// keyStat is one logical partition under a candidate.
type keyStat struct {
	key            synthkey.Key
	epk            string
	part           int
	items          int
	bytes          int64
	current        int
	currentBytes   int64
	currentRU      float64
	firstTs        float64
	lastIdx        int
	lastTs         float64
	load           float64 // RU/s
	hasTs, partial bool
}

// context is what every candidate's analysis shares.
type context struct {
	docs      []Document
	sizes     []int
	charges   []float64
	from      int // first index of the current window
	opts      Options
	rep       *Report
	n         int // partitions
	rate      float64
	rateKnown bool
	hasTs     bool // every document has _ts
	nowTs     float64
}

// Analyze evaluates the candidates on the documents (in insertion order)
// and returns the ranked report.
func Analyze(docs []Document, opts Options) (*Report, error) {
	if len(docs) == 0 {
		return nil, ErrEmptySample
	}
	n := len(docs)
	cx := &context{docs: docs, sizes: make([]int, n), charges: make([]float64, n)}
	rep := &Report{Source: Source{Name: opts.SourceName, Live: opts.Live, Documents: n}, Warnings: slices.Clone(opts.Warnings)}
	cx.rep = rep
	var sumCharge float64
	minTs, maxTs := math.Inf(1), math.Inf(-1)
	for i, d := range docs {
		cx.sizes[i] = d.size()
		cx.charges[i] = d.writeCharge()
		sumCharge += cx.charges[i]
		rep.Source.Bytes += int64(cx.sizes[i])
		if d.HasTs {
			rep.Source.WithTimestamp++
			minTs, maxTs = min(minTs, d.Ts), max(maxTs, d.Ts)
		}
	}
	avgSize := float64(rep.Source.Bytes) / float64(n)
	rep.Source.AvgDocumentBytes = round(avgSize, 1)
	rep.AvgWriteRU = round(sumCharge/float64(n), 3)
	rep.AvgReadRU = round(throughput.ReadCharge(int(avgSize)), 3)
	cx.hasTs = rep.Source.WithTimestamp == n
	if rep.Source.WithTimestamp > 0 {
		rep.Source.FirstTs, rep.Source.LastTs = int64(minTs), int64(maxTs)
		rep.Source.SpanDays = round((maxTs-minTs)/secondsPerDay, 4)
		cx.nowTs = maxTs
	}

	// The current window.
	w := min(n, max(int(math.Ceil(WindowFraction*float64(n))), WindowMin))
	cx.from = n - w
	rep.CurrentWindow = Window{Documents: w, FirstIndex: cx.from,
		Rule: fmt.Sprintf("the last %.0f%% of the documents in insertion order, at least %d", WindowFraction*100, WindowMin)}
	if docs[cx.from].HasTs && docs[n-1].HasTs {
		rep.CurrentWindow.SpanDays = round((docs[n-1].Ts-docs[cx.from].Ts)/secondsPerDay, 4)
	}

	// Growth and the write rate.
	g := opts.Growth
	switch {
	case g.DocumentsPerDay > 0 || g.BytesPerDay > 0:
		if g.BytesPerDay == 0 {
			g.BytesPerDay = g.DocumentsPerDay * avgSize
		}
		if g.DocumentsPerDay == 0 {
			g.DocumentsPerDay = g.BytesPerDay / avgSize
		}
		rep.Growth = GrowthInfo{DocumentsPerDay: g.DocumentsPerDay, BytesPerDay: g.BytesPerDay, From: "--growth"}
	case rep.Source.SpanDays > 0 && rep.Source.WithTimestamp >= 2:
		days := (maxTs - minTs) / secondsPerDay
		rep.Growth = GrowthInfo{DocumentsPerDay: float64(n) / days, BytesPerDay: float64(rep.Source.Bytes) / days, From: "timestamps"}
	default:
		rep.Growth = GrowthInfo{From: "none"}
	}
	rep.Growth.DocumentsPerDay = round(rep.Growth.DocumentsPerDay, 3)
	rep.Growth.BytesPerDay = round(rep.Growth.BytesPerDay, 1)
	var workloadWrites float64
	opts.Workload = slices.Clone(opts.Workload)
	for i := range opts.Workload {
		op := &opts.Workload[i]
		if err := op.canon(); err != nil {
			return nil, fmt.Errorf("workload operation %d: %v", i+1, err)
		}
		if op.Op == "write" {
			workloadWrites += op.Rate
		}
	}
	switch {
	case workloadWrites > 0:
		cx.rate, rep.WriteRateFrom = workloadWrites, "workload"
	case rep.Growth.DocumentsPerDay > 0:
		cx.rate, rep.WriteRateFrom = rep.Growth.DocumentsPerDay/secondsPerDay, rep.Growth.From
	default:
		rep.WriteRateFrom = "none"
	}
	cx.rateKnown = rep.WriteRateFrom != "none"
	rep.WriteRate = round(cx.rate, 6)

	// Partitions, throughput and the per-partition budget.
	switch {
	case opts.Partitions > 0:
		cx.n = opts.Partitions
		rep.PartitionsFrom = cmp.Or(opts.PartitionsFrom, "--partitions")
	case opts.Throughput > 0:
		cx.n = int(math.Ceil(opts.Throughput / PartitionMaxRU))
		rep.PartitionsFrom = "--throughput"
	default:
		bytes := float64(rep.Source.Bytes) + ProjectionDays*rep.Growth.BytesPerDay
		ru := cx.rate * rep.AvgWriteRU
		for _, op := range opts.Workload {
			if op.Op != "write" {
				ru += op.Rate * max(rep.AvgReadRU, throughput.QueryBaseCharge)
			}
		}
		cx.n = max(1, int(math.Ceil(bytes/PartitionMaxBytes)), int(math.Ceil(ru/PartitionMaxRU)))
		rep.PartitionsFrom = "projected size"
	}
	rep.Partitions = cx.n
	rep.Throughput = opts.Throughput
	if rep.Throughput <= 0 {
		rep.Throughput = float64(cx.n) * PartitionMaxRU
		rep.ThroughputAssumed = true
	}
	rep.PartitionBudgetRU = opts.PartitionBudgetRU
	if rep.PartitionBudgetRU <= 0 {
		rep.PartitionBudgetRU = min(rep.Throughput/float64(cx.n), PartitionMaxRU)
	}
	rep.PartitionBudgetRU = round(rep.PartitionBudgetRU, 3)
	rep.Workload = opts.Workload
	rep.Observed = opts.Observed
	cx.opts = opts

	cands := opts.Candidates
	if len(cands) == 0 {
		cands = Propose(docs, cx.n)
		if len(cands) == 0 {
			return nil, errors.New("no property of the documents qualifies as a candidate key; give candidates with --candidate")
		}
	}
	parsed := make([]*synthkey.Expr, len(cands))
	for i, c := range cands {
		e, err := synthkey.Parse(c.Expr)
		if err != nil {
			return nil, &ExprError{Expr: c.Expr, Err: err}
		}
		parsed[i] = e
	}
	for i, c := range cands {
		if opts.Progress != nil && n >= 20000 {
			opts.Progress(fmt.Sprintf("analyzing candidate %d of %d: %s", i+1, len(cands), c.Expr))
		}
		cr, err := cx.candidate(c, parsed[i])
		if err != nil {
			return nil, &ExprError{Expr: c.Expr, Err: err}
		}
		rep.Candidates = append(rep.Candidates, cr)
	}
	rank(rep)
	return rep, nil
}

// candidate analyzes one candidate.
func (cx *context) candidate(c Candidate, e *synthkey.Expr) (CandidateReport, error) {
	def := DefinitionFor(e)
	if c.Definition != nil {
		def = *c.Definition
	}
	ranges := c.Ranges
	if len(ranges) == 0 {
		ranges = EvenLayout(def, cx.n)
	}
	np := len(ranges)
	cr := CandidateReport{Key: c.Expr, Canonical: e.String(), Current: c.Current, Proposed: c.Proposed, Definition: def}
	switch {
	case e.Levels() > 1:
		cr.Kind = "hierarchical"
	case e.IsPath():
		cr.Kind = "path"
	default:
		cr.Kind = "synthetic"
	}
	if lo, hi, ok := e.RandomRange(); ok {
		cr.RandomSuffix = &RandomSuffix{Lo: lo, Hi: hi, Keys: hi - lo + 1}
	}

	// Every document's key, grouped into logical partitions.
	h := fnv.New64a()
	h.Write([]byte(c.Expr))
	rng := rand.New(rand.NewPCG(cx.opts.Seed, h.Sum64()))
	byID := make(map[string]*keyStat)
	var keys []*keyStat
	docKey := make([]*keyStat, len(cx.docs))
	for i, d := range cx.docs {
		k, err := e.ComputeMap(d.Value, rng)
		if err != nil {
			cr.FailedItems++
			if cr.FailedExample == "" {
				cr.FailedExample = err.Error()
			}
			continue
		}
		id := keyID(k)
		ks := byID[id]
		if ks == nil {
			x, err := def.EPK(epk.FromValues(k))
			if err != nil {
				return cr, err
			}
			ks = &keyStat{key: k, epk: x, part: locate(ranges, x), firstTs: d.Ts, hasTs: d.HasTs}
			for _, v := range k {
				if isUndefined(v) {
					ks.partial = true
				}
			}
			byID[id] = ks
			keys = append(keys, ks)
		}
		docKey[i] = ks
		ks.items++
		ks.bytes += int64(cx.sizes[i])
		ks.lastIdx, ks.lastTs = i, d.Ts
		if i >= cx.from {
			ks.current++
			ks.currentBytes += int64(cx.sizes[i])
			ks.currentRU += cx.charges[i]
		}
		if ks.partial {
			cr.UndefinedItems++
		}
	}
	if len(keys) == 0 {
		return cr, fmt.Errorf("no document has a key under it (%s)", cr.FailedExample)
	}
	cr.DistinctValues = len(keys)

	cr.Monotonicity = round(monotonicity(keys, docKey), 4)
	cr.Monotonic = cr.Monotonicity >= MonotonicThreshold

	// Physical partitions: storage, current writes.
	parts := make([]PartitionStat, np)
	curCharge := make([]float64, np)
	var totalBytes int64
	curDocs, curKeys := 0, 0
	var hotKey *keyStat
	for i, r := range ranges {
		parts[i] = PartitionStat{ID: r.ID, Min: r.Min, Max: r.Max}
	}
	for _, ks := range keys {
		p := &parts[ks.part]
		p.Items += ks.items
		p.Bytes += ks.bytes
		p.LogicalPartitions++
		p.CurrentWrites += ks.current
		curCharge[ks.part] += ks.currentRU
		totalBytes += ks.bytes
		curDocs += ks.current
		if ks.current > 0 {
			curKeys++
			if hotKey == nil || ks.current > hotKey.current {
				hotKey = ks
			}
		}
	}
	hot := 0
	for i := range parts {
		parts[i].StorageShare = round(share(float64(parts[i].Bytes), float64(totalBytes)), 4)
		parts[i].CurrentWriteShare = round(share(float64(parts[i].CurrentWrites), float64(curDocs)), 4)
		if parts[i].CurrentWrites > parts[hot].CurrentWrites {
			hot = i
		}
		if parts[i].CurrentWrites > 0 {
			cr.CurrentWrites.PartitionsWritten++
		}
	}
	cw := &cr.CurrentWrites
	cw.Documents, cw.DistinctKeys = curDocs, curKeys
	if hotKey != nil {
		cw.HottestKey = showKey(hotKey.key)
		cw.HottestKeyShare = round(share(float64(hotKey.current), float64(curDocs)), 4)
	}
	cw.HottestPartition, cw.HottestPartitionIndex = parts[hot].ID, hot+1
	cw.HottestPartitionShare = round(share(float64(parts[hot].CurrentWrites), float64(curDocs)), 4)
	cw.EvenShareLimit = round(evenShareLimit(np, curDocs), 4)
	cr.HottestPartitionShare = cw.HottestPartitionShare

	// Load: current writes at the write rate, plus the workload.
	wl := cx.workload(e, def, ranges, keys, byID)
	writeRate := cx.rate
	if !cx.rateKnown {
		writeRate = nominalWriteRate
	}
	distRate := max(writeRate-wl.targetedWrites, 0)
	ru := make([]float64, np)
	var totalRU float64
	for i := range parts {
		// RU a partition spends per distributed write, times their rate.
		ru[i] = distRate*share(curCharge[i], float64(curDocs)) + wl.partRU[i]
		totalRU += ru[i]
	}
	for i := range parts {
		parts[i].RU = round(ru[i], 4)
		parts[i].RUShare = round(share(ru[i], totalRU), 4)
	}
	for _, ks := range keys {
		ks.load = distRate*share(ks.currentRU, float64(curDocs)) + wl.keyRU[ks]
	}
	storage := make([]float64, np)
	for i := range parts {
		storage[i] = float64(parts[i].Bytes)
	}
	cr.StorageSkew = Skew{MaxOverMean: round(maxOverMean(storage), 3), Gini: round(gini(storage), 4)}
	cr.RUSkew = Skew{MaxOverMean: round(maxOverMean(ru), 3), Gini: round(gini(ru), 4)}
	cx.attachObserved(&cr, parts, c.Current)
	cr.Partitions = parts

	cr.Throttle = cx.throttle(keys, ru, curCharge, curDocs, wl, writeRate, distRate)
	cr.LogicalLimit = cx.logicalLimit(keys, cr.Monotonic)
	if len(cx.opts.Workload) > 0 {
		cr.Queries = wl.queries
	}

	// Top keys and the frequency distribution.
	view := func(ks *keyStat) KeyStat {
		return KeyStat{Key: showKey(ks.key), Items: ks.items, Bytes: ks.bytes, CurrentWrites: ks.current,
			LoadRU: round(ks.load, 4), Partition: ranges[ks.part].ID}
	}
	top := func(less func(a, b *keyStat) int) []KeyStat {
		s := slices.Clone(keys)
		slices.SortStableFunc(s, func(a, b *keyStat) int {
			if c := less(a, b); c != 0 {
				return c
			}
			return compareKeys(a.key, b.key)
		})
		out := make([]KeyStat, 0, TopKeys)
		for _, ks := range s[:min(TopKeys, len(s))] {
			out = append(out, view(ks))
		}
		return out
	}
	cr.TopKeysByItems = top(func(a, b *keyStat) int { return cmp.Compare(b.items, a.items) })
	cr.TopKeysByBytes = top(func(a, b *keyStat) int { return cmp.Compare(b.bytes, a.bytes) })
	cr.TopKeysByLoad = top(func(a, b *keyStat) int { return cmp.Compare(b.load, a.load) })
	counts := make([]int, len(keys))
	for i, ks := range keys {
		counts[i] = ks.items
	}
	slices.SortFunc(counts, func(a, b int) int { return cmp.Compare(b, a) })
	cr.KeyFrequency.Top = counts[:min(FrequencyKeys, len(counts))]
	for _, c := range counts[len(cr.KeyFrequency.Top):] {
		cr.KeyFrequency.OthersKeys++
		cr.KeyFrequency.OthersItems += c
	}
	return cr, nil
}

// evenShareLimit is the largest share of current writes the busiest of n
// partitions may take for the spread to count as even: 1.5 times the fair
// share 1/n (but at most 20 points above it), plus three standard deviations
// of the sampling noise of a window of w writes.
func evenShareLimit(n, w int) float64 {
	if n <= 1 {
		return 1
	}
	fair := 1 / float64(n)
	noise := 0.0
	if w > 0 {
		noise = 3 * math.Sqrt(fair*(1-fair)/float64(w))
	}
	return min(1, min(1.5*fair, fair+0.2)+noise)
}

// monotonicity returns Spearman's rank correlation between the insertion
// order of the documents and the order of their keys (ties get midranks).
func monotonicity(keys []*keyStat, docKey []*keyStat) float64 {
	if len(keys) < 2 {
		return 0
	}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b *keyStat) int { return compareKeys(a.key, b.key) })
	sizes := make([]int, len(sorted))
	for i, ks := range sorted {
		sizes[i] = ks.items
	}
	ranks := midranks(sizes)
	rankOf := make(map[*keyStat]float64, len(sorted))
	for i, ks := range sorted {
		rankOf[ks] = ranks[i]
	}
	var xs, ys []float64
	for _, ks := range docKey {
		if ks == nil {
			continue
		}
		xs = append(xs, float64(len(xs)+1))
		ys = append(ys, rankOf[ks])
	}
	return pearson(xs, ys)
}

// attachObserved copies the live telemetry of the current key's partitions.
func (cx *context) attachObserved(cr *CandidateReport, parts []PartitionStat, current bool) {
	if !current || len(cx.opts.Observed) == 0 {
		return
	}
	for i := range parts {
		for _, o := range cx.opts.Observed {
			if o.ID == parts[i].ID {
				parts[i].ObservedRU = o.ConsumedRU
				parts[i].ObservedThrottled = o.Throttled
			}
		}
	}
}

// throttle projects the 429 risk: the busiest partition's RU/s against its
// budget, and the hottest key's against what one partition can serve.
func (cx *context) throttle(keys []*keyStat, ru, curCharge []float64, curDocs int, wl *workloadResult, writeRate, distRate float64) Throttle {
	budget := cx.rep.PartitionBudgetRU
	t := Throttle{BudgetRU: budget}
	hot := slices.Max(ru)
	t.HottestPartitionRU = round(hot, 4)
	t.Utilization = round(share(hot, budget), 4)
	// The write rate at which the busiest partition reaches its budget, with
	// the rest of the workload as it is; and what an even spread would allow.
	maxRate := math.Inf(1)
	var sumCharge float64
	for i := range ru {
		per := share(curCharge[i], float64(curDocs))
		sumCharge += curCharge[i]
		fixed := wl.partRU[i]
		if per > 0 {
			maxRate = min(maxRate, max(budget-fixed, 0)/per)
		}
	}
	extra := writeRate - distRate // targeted writes, part of the workload
	if !math.IsInf(maxRate, 1) {
		t.MaxWriteRate = round(maxRate+extra, 3)
	}
	if avg := share(sumCharge, float64(curDocs)); avg > 0 {
		t.EvenMaxWriteRate = round(float64(len(ru))*budget/avg, 3)
	}
	var hk *keyStat
	for _, ks := range keys {
		if hk == nil || ks.load > hk.load {
			hk = ks
		}
	}
	if hk != nil {
		t.HottestKeyRU = round(hk.load, 4)
		if per := share(hk.currentRU, float64(curDocs)); per > 0 {
			t.HotKeyMaxWriteRate = round(max(PartitionMaxRU-wl.keyRU[hk], 0)/per, 3)
		}
	}
	if !cx.rateKnown && len(cx.opts.Workload) == 0 {
		t.Risk = "unknown"
		return t
	}
	t.HotKeyOverPartition = hk != nil && hk.load >= PartitionMaxRU
	switch u := share(hot, budget); {
	case u >= 1 || t.HotKeyOverPartition:
		t.Risk = "high"
	case u >= 0.7:
		t.Risk = "medium"
	case u >= 0.5:
		t.Risk = "low"
	default:
		t.Risk = "none"
	}
	return t
}

// logicalLimit projects when the first logical partition reaches 20 GB.
func (cx *context) logicalLimit(keys []*keyStat, monotonic bool) LogicalLimit {
	rep := cx.rep
	l := LogicalLimit{LimitBytes: LogicalPartitionLimit}
	var largest *keyStat
	var curBytes int64
	for _, ks := range keys {
		if largest == nil || ks.bytes > largest.bytes {
			largest = ks
		}
		curBytes += ks.currentBytes
	}
	l.LargestKey, l.LargestKeyBytes = showKey(largest.key), largest.bytes
	l.LargestKeyShare = round(float64(largest.bytes)/LogicalPartitionLimit, 6)
	if largest.bytes >= LogicalPartitionLimit {
		zero := 0.0
		l.DaysTo20GB, l.FirstKeyTo20GB, l.Risk = &zero, l.LargestKey, "now"
		return l
	}
	gb := rep.Growth.BytesPerDay
	if gb <= 0 || curBytes == 0 {
		l.Risk = "unknown"
		return l
	}
	// A monotonic key (a time bucket) stops growing when its time is over:
	// its keys live about as long as the finished ones did.
	lifetime := 0.0
	if monotonic && cx.hasTs {
		var spans []float64
		for _, ks := range keys {
			if ks.lastIdx < cx.from && ks.items >= 2 {
				spans = append(spans, (ks.lastTs-ks.firstTs)/secondsPerDay)
			}
		}
		if len(spans) > 0 {
			slices.Sort(spans)
			lifetime = max(spans[len(spans)/2], 1.0/24)
			l.KeyLifetimeDays = round(lifetime, 4)
		}
	}
	best := math.Inf(1)
	var first *keyStat
	maxFinal := 0.0
	for _, ks := range keys {
		if ks.currentBytes == 0 {
			maxFinal = max(maxFinal, float64(ks.bytes))
			continue
		}
		growth := gb * float64(ks.currentBytes) / float64(curBytes)
		days := (LogicalPartitionLimit - float64(ks.bytes)) / growth
		if lifetime > 0 {
			remaining := max(lifetime-(cx.nowTs-ks.firstTs)/secondsPerDay, 0)
			maxFinal = max(maxFinal, float64(ks.bytes)+growth*remaining)
			if days > remaining {
				continue
			}
		}
		if days < best {
			best, first = days, ks
		}
	}
	if lifetime > 0 {
		l.ProjectedMaxBytes = round(maxFinal, 0)
	}
	if first == nil {
		l.Risk = "none"
		return l
	}
	d := round(best, 2)
	l.DaysTo20GB, l.FirstKeyTo20GB = &d, showKey(first.key)
	switch {
	case best < 365:
		l.Risk = "high"
	case best < LimitHorizonDays:
		l.Risk = "medium"
	default:
		l.Risk = "none"
	}
	return l
}
