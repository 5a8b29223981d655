package advise

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/synthkey"
)

// LiveContainer is what the live mode knows of a container before reading
// its documents: `parsec advise --live` reads it over the REST API, the
// server's advise endpoint from its own engine.
type LiveContainer struct {
	Name   string           // "database/container", for the report
	Key    *epk.Definition  // the container's partition key; nil: none
	Ranges []PartitionRange // the partition map, in any order
	// Telemetry is the partitions' recorded use; nil when unavailable.
	Telemetry *LiveTelemetry
}

// LiveTelemetry is a container's recorded use.
type LiveTelemetry struct {
	Throughput float64 // provisioned RU/s (the autoscale maximum when higher)
	Observed   []ObservedRange
}

// PrepareLive fills opts for a live container: the source, the observed
// partitions and, unless layoutGiven (the user chose the partitions or the
// throughput), the container's own partitions and throughput. The
// container's current key becomes the first candidate, on the container's
// real ranges unless layoutGiven; a given candidate equal to it is
// replaced, keeping the spelling the user gave.
func PrepareLive(opts *Options, c LiveContainer, layoutGiven bool, progress func(string)) error {
	ranges := slices.Clone(c.Ranges)
	slices.SortFunc(ranges, func(a, b PartitionRange) int { return strings.Compare(a.Min, b.Min) })
	if len(ranges) == 0 {
		return fmt.Errorf("container %s reports no partition key ranges", c.Name)
	}
	opts.SourceName = c.Name
	opts.Live = true
	if t := c.Telemetry; t != nil {
		budget := 0.0
		for _, o := range t.Observed {
			opts.Observed = append(opts.Observed, o)
			budget = max(budget, o.BudgetRU)
		}
		if !layoutGiven {
			opts.Throughput = t.Throughput
			opts.PartitionBudgetRU = budget
		}
	}
	if !layoutGiven {
		opts.Partitions = len(ranges)
		opts.PartitionsFrom = "the container's ranges"
	}
	if c.Key == nil || len(c.Key.Paths) == 0 {
		return nil
	}
	def := *c.Key
	if def.Version == 0 {
		def.Version = 1
	}
	if def.Kind == "" {
		def.Kind = epk.Hash
	}
	expr := def.Paths[0]
	if len(def.Paths) > 1 {
		expr = "[" + strings.Join(def.Paths, ", ") + "]"
	}
	e, err := synthkey.Parse(expr)
	if err != nil {
		if progress != nil {
			progress(fmt.Sprintf("the container's key %s cannot be evaluated: %v", expr, err))
		}
		return nil
	}
	cur := Candidate{Expr: expr, Definition: &def, Current: true}
	if !layoutGiven {
		cur.Ranges = ranges
	}
	dup := slices.IndexFunc(opts.Candidates, func(x Candidate) bool {
		o, err := synthkey.Parse(x.Expr)
		return err == nil && o.String() == e.String()
	})
	if dup >= 0 {
		cur.Expr = opts.Candidates[dup].Expr
		opts.Candidates[dup] = cur
	} else {
		opts.Candidates = append([]Candidate{cur}, opts.Candidates...)
	}
	return nil
}

// ProposeLive adds candidates proposed from the documents beside the
// current key (PrepareLive's first candidate), for a live analysis to which
// the user gave no candidates.
func ProposeLive(opts *Options, docs []Document) {
	n := opts.Partitions
	if n == 0 {
		n = int(math.Ceil(opts.Throughput / PartitionMaxRU))
	}
	var cur *synthkey.Expr
	if len(opts.Candidates) > 0 {
		cur, _ = synthkey.Parse(opts.Candidates[0].Expr)
	}
	for _, p := range Propose(docs, max(n, 1)) {
		if pe, err := synthkey.Parse(p.Expr); err == nil && cur != nil && pe.String() == cur.String() {
			opts.Candidates[0].Proposed = p.Proposed
			continue
		}
		opts.Candidates = append(opts.Candidates, p)
	}
}
