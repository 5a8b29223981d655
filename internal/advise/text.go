package advise

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// header describes the inputs in a few lines, for the table and the HTML
// report.
func header(rep *Report) []string {
	s := rep.Source
	var lines []string
	from := s.Name
	if from == "" {
		from = "the sample"
	}
	if s.Live {
		from = "container " + from
	}
	lines = append(lines, fmt.Sprintf("%s documents (%s, %s on average) from %s",
		thousands(s.Documents), bytesText(float64(s.Bytes)), bytesText(s.AvgDocumentBytes), from))
	tp := fmt.Sprintf("%s RU/s", num(rep.Throughput))
	if rep.ThroughputAssumed {
		tp += " assumed"
	}
	lines = append(lines, fmt.Sprintf("layout: %d physical partitions (from %s), %s: %s RU/s per partition",
		rep.Partitions, rep.PartitionsFrom, tp, num(rep.PartitionBudgetRU)))
	w := fmt.Sprintf("writes: %s RU each on average", num(rep.AvgWriteRU))
	if rep.WriteRateFrom != "none" {
		w = fmt.Sprintf("writes: %s/s (from %s), %s RU each on average", num(rep.WriteRate), rep.WriteRateFrom, num(rep.AvgWriteRU))
	} else {
		w += "; no write rate known"
	}
	if rep.Growth.From != "none" {
		w += fmt.Sprintf("; growth %s documents/day = %s/day (from %s)", num(rep.Growth.DocumentsPerDay), bytesText(rep.Growth.BytesPerDay), rep.Growth.From)
	}
	lines = append(lines, w)
	cw := fmt.Sprintf("current writes: the last %s documents in insertion order (%.0f%%, at least %d)",
		thousands(rep.CurrentWindow.Documents), WindowFraction*100, WindowMin)
	if rep.CurrentWindow.SpanDays > 0 {
		cw += fmt.Sprintf(", spanning %s", daysText(rep.CurrentWindow.SpanDays))
	}
	lines = append(lines, cw)
	if len(rep.Workload) > 0 {
		var total float64
		for _, op := range rep.Workload {
			total += op.Rate
		}
		lines = append(lines, fmt.Sprintf("workload: %d operation classes, %s operations/s", len(rep.Workload), num(total)))
	}
	return lines
}

// WriteTable writes the report as a table and a list of reasons per
// candidate.
func WriteTable(w io.Writer, rep *Report) error {
	var b strings.Builder
	b.WriteString("Partition key advice\n")
	for _, l := range header(rep) {
		b.WriteString("  " + l + "\n")
	}
	for _, m := range rep.Warnings {
		b.WriteString("  warning: " + m + "\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fair := ""
	if rep.Partitions > 0 {
		fair = fmt.Sprintf(" (FAIR %s)", pct(1/float64(rep.Partitions)))
	}
	fmt.Fprintf(tw, "RANK\tKEY\tDISTINCT\tMONOTONIC\tHOT PARTITION%s\tHOT KEY\tSTORAGE MAX/MEAN\t429 RISK\t20 GB IN\tFAN-OUT\n", fair)
	for _, c := range rep.Candidates {
		mono := "no"
		if c.Monotonic {
			mono = "yes"
		}
		limit := "never"
		switch {
		case c.LogicalLimit.Risk == "unknown":
			limit = "?"
		case c.LogicalLimit.DaysTo20GB != nil:
			limit = strings.Replace(daysText(*c.LogicalLimit.DaysTo20GB), "more than ", ">", 1)
		}
		fan := "-"
		if c.Queries != nil {
			fan = pct(c.Queries.FanOutShare)
		}
		key := c.Key
		if c.Current {
			key += " (current)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t%s\n", c.Rank, key, thousands(c.DistinctValues), mono,
			pct(c.HottestPartitionShare), pct(c.CurrentWrites.HottestKeyShare), c.StorageSkew.MaxOverMean,
			c.Throttle.Risk, limit, fan)
	}
	tw.Flush()
	for _, c := range rep.Candidates {
		fmt.Fprintf(&b, "\n%d. %s: %s\n", c.Rank, c.Key, c.Summary)
		if c.Proposed != "" {
			fmt.Fprintf(&b, "   proposed: %s\n", c.Proposed)
		}
		for _, r := range c.Reasons {
			fmt.Fprintf(&b, "   - %s\n", r)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
