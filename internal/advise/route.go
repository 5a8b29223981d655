package advise

import (
	"fmt"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/throughput"
	"github.com/parsecdb/parsec/synthkey"
)

// workloadResult is the workload's load under one candidate.
type workloadResult struct {
	partRU         []float64 // RU/s per partition from the workload, writes spread like the sample excluded
	keyRU          map[*keyStat]float64
	targetedWrites float64 // writes/s whose key the workload names
	queries        *Queries
}

// route is where one execution of an operation goes, for one set of
// values.
type route struct {
	keys  []string        // key ids touched (single-key and key fan-out routes)
	parts map[int]float64 // partition → RU of one execution there
	nkeys int
}

// sentinels stand for values a filter does not fix when finding which
// levels of a hierarchical key it determines.
var sentinels = []any{"\x00advise-a", "\x00advise-b", "\x00advise-c"}

// workload routes every operation of the workload under the candidate e.
func (cx *context) workload(e *synthkey.Expr, def epk.Definition, ranges []PartitionRange, keys []*keyStat, byID map[string]*keyStat) *workloadResult {
	wr := &workloadResult{partRU: make([]float64, len(ranges)), keyRU: make(map[*keyStat]float64)}
	if len(cx.opts.Workload) == 0 {
		return wr
	}
	q := &Queries{}
	wr.queries = q
	paths := e.Paths()
	canon := make([]string, len(paths))
	for i, p := range paths {
		canon[i], _ = canonicalPath(p)
	}
	readRU := cx.rep.AvgReadRU
	writeRU := cx.rep.AvgWriteRU
	var total, single float64
	for _, op := range cx.opts.Workload {
		if op.canon() != nil {
			continue // Analyze checked every operation
		}
		r := OpRoute{Name: op.label(), Op: op.Op, Rate: op.Rate}
		// What the operation fixes: a value from the filter, or a value that
		// varies like the sample's (fields), for each base path.
		fixed := make([]bool, len(paths))
		varies := false
		covered := true
		fieldSet := map[string]bool{}
		for _, f := range op.canonFields {
			fieldSet[f] = true
		}
		for i, c := range canon {
			_, inFilter := op.canonFilter[c]
			fixed[i] = inFilter || fieldSet[c]
			varies = varies || (!inFilter && fieldSet[c])
			covered = covered && fixed[i]
		}
		if op.Op == "write" {
			r.Routing, r.PartitionsTouched = "single", 1
			r.RU = round(op.Rate*writeRU, 4)
			if covered && !varies && len(op.canonFilter) > 0 {
				// A write whose key the workload names: the load lands there.
				ks, err := e.Expand(baseFrom(op, canon, fixed, nil))
				if err == nil && len(ks) > 0 {
					wr.targetedWrites += op.Rate
					for _, k := range ks {
						x, err := def.EPK(epk.FromValues(k))
						if err != nil {
							continue
						}
						share := op.Rate * writeRU / float64(len(ks))
						wr.partRU[locate(ranges, x)] += share
						if s := byID[keyID(k)]; s != nil {
							wr.keyRU[s] += share
						}
					}
					r.Note = "targets " + showKeys(ks)
				}
			}
			q.Operations = append(q.Operations, r)
			continue
		}
		anyFixed := false
		for _, f := range fixed {
			anyFixed = anyFixed || f
		}
		mode := "all"
		switch {
		case covered:
			mode = "single"
			if _, _, ok := e.RandomRange(); ok {
				mode = "keys"
			}
		case anyFixed && e.Levels() > 1:
			mode = "prefix"
		}
		// Group the executions by the values they fix: one group when the
		// values are all known (or irrelevant), else one per distinct set of
		// values among the sample's documents, weighted by its share.
		type group struct {
			base   []any
			weight float64
		}
		var groups []group
		if !varies || mode == "all" {
			groups = []group{{base: baseFrom(op, canon, fixed, nil), weight: 1}}
		} else {
			idx := map[string]int{}
			for _, d := range cx.docs {
				b := baseFrom(op, canon, fixed, d.Value)
				id := keyID(b)
				j, ok := idx[id]
				if !ok {
					j = len(groups)
					idx[id] = j
					groups = append(groups, group{base: b})
				}
				groups[j].weight++
			}
			for j := range groups {
				groups[j].weight /= float64(len(cx.docs))
			}
		}
		var touched, ruPer, baseline float64
		prefixLevels := 0
		allOne := true
		for _, g := range groups {
			rt := cx.routeOne(e, def, ranges, op, mode, g.base, fixed, readRU, &prefixLevels)
			if rt == nil { // the values give no key (a value concat cannot use)
				continue
			}
			touched += g.weight * float64(len(rt.parts))
			if len(rt.parts) != 1 {
				allOne = false
			}
			for p, ru := range rt.parts {
				wr.partRU[p] += op.Rate * g.weight * ru
				ruPer += g.weight * ru
			}
			if rt.nkeys > r.Keys {
				r.Keys = rt.nkeys
			}
			if len(rt.keys) == 1 {
				if s := byID[rt.keys[0]]; s != nil {
					for _, ru := range rt.parts {
						wr.keyRU[s] += op.Rate * g.weight * ru
					}
				}
			}
		}
		if mode == "prefix" && prefixLevels == 0 {
			mode = "all"
		}
		r.Routing = mode
		total += op.Rate
		r.PartitionsTouched = round(touched, 3)
		r.RU = round(op.Rate*ruPer, 4)
		if op.Op == "read" && (mode == "single" || mode == "keys") {
			baseline = readRU
		} else {
			baseline = throughput.QueryBaseCharge
		}
		r.FanOutRU = round(max(op.Rate*(ruPer-baseline), 0), 4)
		switch mode {
		case "single":
			single += op.Rate
		case "keys":
			r.Note = fmt.Sprintf("the random suffix makes every execution try %d keys", r.Keys)
		case "prefix":
			r.Note = fmt.Sprintf("routed by the first %d level(s) of the key", prefixLevels)
			if allOne {
				single += op.Rate
			}
		case "all":
			r.Note = "does not fix " + missingPaths(paths, fixed) + ": every partition is queried"
		}
		q.FanOutRU += r.FanOutRU
		q.Operations = append(q.Operations, r)
	}
	// Shares of the reads and queries: a write always goes to one partition.
	q.SinglePartitionShare, q.FanOutShare = 1, 0
	if total > 0 {
		q.SinglePartitionShare = round(single/total, 4)
		q.FanOutShare = round(1-single/total, 4)
	}
	q.FanOutRU = round(q.FanOutRU, 4)
	return wr
}

// routeOne routes one execution with the base values base.
func (cx *context) routeOne(e *synthkey.Expr, def epk.Definition, ranges []PartitionRange, op Operation, mode string, base []any, fixed []bool, readRU float64, prefixLevels *int) *route {
	rt := &route{parts: map[int]float64{}}
	switch mode {
	case "single", "keys":
		ks, err := e.Expand(base)
		if err != nil {
			return nil
		}
		rt.nkeys = len(ks)
		for _, k := range ks {
			x, err := def.EPK(epk.FromValues(k))
			if err != nil {
				return nil
			}
			p := locate(ranges, x)
			rt.keys = append(rt.keys, keyID(k))
			if op.Op == "read" {
				rt.parts[p] += readRU // a point read per key
			} else {
				rt.parts[p] = throughput.QueryBaseCharge // one query per partition
			}
		}
		return rt
	case "prefix":
		prefixes, j := prefixKeys(e, base, fixed)
		if j > *prefixLevels {
			*prefixLevels = j
		}
		if j == 0 {
			break
		}
		for _, pk := range prefixes {
			pr, err := def.PrefixRange(epk.FromValues(pk))
			if err != nil {
				return nil
			}
			for i, r := range ranges {
				if (epk.Range{Min: r.Min, Max: r.Max}).Overlaps(pr) {
					rt.parts[i] = throughput.QueryBaseCharge
				}
			}
		}
		return rt
	}
	for i := range ranges {
		rt.parts[i] = throughput.QueryBaseCharge
	}
	return rt
}

// prefixKeys returns the key prefixes a hierarchical key takes when only the
// fixed base values are known, and how many leading levels they determine:
// the levels that come out the same whatever the other values are (tried
// with several stand-in values). With random(...) in a determined level,
// there is one prefix per suffix.
func prefixKeys(e *synthkey.Expr, base []any, fixed []bool) ([]synthkey.Key, int) {
	var firsts []synthkey.Key
	var all []synthkey.Key
	for si, s := range sentinels {
		b := make([]any, len(base))
		for i := range b {
			b[i] = s
			if fixed[i] {
				b[i] = base[i]
			}
		}
		ks, err := e.Expand(b)
		if err != nil || len(ks) == 0 {
			return nil, 0
		}
		firsts = append(firsts, ks[0])
		if si == 0 {
			all = ks
		}
	}
	j := 0
	for ; j < e.Levels()-1; j++ {
		same := true
		for _, k := range firsts[1:] {
			if keyID(k[j:j+1]) != keyID(firsts[0][j:j+1]) {
				same = false
			}
		}
		if !same {
			break
		}
	}
	if j == 0 {
		return nil, 0
	}
	seen := map[string]bool{}
	var out []synthkey.Key
	for _, k := range all {
		p := k[:j]
		if id := keyID(p); !seen[id] {
			seen[id] = true
			out = append(out, p)
		}
	}
	return out, j
}

// baseFrom builds the base values of an execution: the filter's value for a
// path it names, the document's for a field (doc may be nil when there are
// none), and a placeholder (the first sentinel) for a path it leaves open.
func baseFrom(op Operation, canon []string, fixed []bool, doc map[string]any) []any {
	b := make([]any, len(canon))
	for i, c := range canon {
		if v, ok := op.canonFilter[c]; ok {
			b[i] = v
			continue
		}
		if fixed[i] && doc != nil {
			if v, ok := lookup(doc, strings.Split(c, "\x00")); ok {
				b[i] = v
			} else {
				b[i] = synthkey.Undefined
			}
			continue
		}
		b[i] = sentinels[0]
	}
	return b
}

func missingPaths(paths []string, fixed []bool) string {
	var out []string
	for i, p := range paths {
		if !fixed[i] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ", ")
}

func showKeys(ks []synthkey.Key) string {
	if len(ks) == 1 {
		return showKey(ks[0])
	}
	return fmt.Sprintf("%d keys (%s … %s)", len(ks), showKey(ks[0]), showKey(ks[len(ks)-1]))
}
