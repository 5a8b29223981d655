package advise

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes the report as one self-contained HTML page: inline CSS,
// charts as inline SVG, a small inline script, no external resources.
func WriteHTML(w io.Writer, rep *Report) error {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Partition key advice</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1180px; padding: 0 16px; color: #1d2330; background: #fbfbfd; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 17px; margin: 0 0 4px; }
h3 { font-size: 13px; margin: 0 0 4px; color: #4a5163; font-weight: 600; }
.inputs { color: #4a5163; margin: 0 0 18px; padding-left: 18px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
th { background: #f0f2f7; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.rank-row { cursor: pointer; }
tr.rank-row:hover, tr.rank-row.active { background: #eef4ff; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.ok { color: #1f7a3f; } .bad { color: #b3261e; }
section.candidate { background: #fff; border: 1px solid #e3e6ee; border-radius: 8px; padding: 14px 16px; margin: 18px 0; }
section.candidate.active { border-color: #4a78c2; box-shadow: 0 0 0 2px #c9d8f2; }
.summary { margin: 0 0 8px; }
ul.reasons { margin: 0 0 12px; padding-left: 20px; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.chart-box { flex: 1 1 340px; min-width: 300px; }
svg.chart { width: 100%; height: auto; background: #fcfcfe; border: 1px solid #eceef4; border-radius: 4px; }
svg.chart text { font: 10px system-ui, sans-serif; fill: #4a5163; }
rect.bar.storage { fill: #4a78c2; } rect.bar.writes { fill: #e07b39; } rect.bar.keys { fill: #4c9a5f; }
rect.bar:hover { opacity: .75; }
line.fair { stroke: #b3261e; stroke-dasharray: 4 3; stroke-width: 1; }
.note { color: #4a5163; font-size: 12px; }
footer { color: #6a7183; font-size: 12px; margin-top: 28px; }
</style>
</head>
<body>
<h1>Partition key advice</h1>
<ul class="inputs">
`)
	for _, l := range header(rep) {
		fmt.Fprintf(&b, "<li>%s</li>\n", esc(l))
	}
	for _, m := range rep.Warnings {
		fmt.Fprintf(&b, "<li class=\"bad\">warning: %s</li>\n", esc(m))
	}
	b.WriteString("</ul>\n<h2>Ranking</h2>\n<table id=\"ranking\">\n<thead><tr><th>Rank</th><th>Key</th><th>Verdict</th><th>Distinct</th><th>Monotonic</th><th>Busiest partition</th><th>Hottest key</th><th>429 risk</th><th>20 GB in</th><th>Fan-out</th></tr></thead>\n<tbody>\n")
	for _, c := range rep.Candidates {
		cls := "ok"
		if len(c.Problems) > 0 {
			cls = "bad"
		}
		limit := "never"
		switch {
		case c.LogicalLimit.Risk == "unknown":
			limit = "unknown"
		case c.LogicalLimit.DaysTo20GB != nil:
			limit = daysText(*c.LogicalLimit.DaysTo20GB)
		}
		fan := "–"
		if c.Queries != nil {
			fan = pct(c.Queries.FanOutShare)
		}
		mono := "no"
		if c.Monotonic {
			mono = "yes"
		}
		key := esc(c.Key)
		if c.Current {
			key += " <span class=\"note\">(current)</span>"
		}
		fmt.Fprintf(&b, "<tr class=\"rank-row\" data-target=\"cand-%d\"><td class=\"num\">%d</td><td><code>%s</code></td><td class=\"%s\">%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td><td>%s</td><td class=\"num\">%s</td></tr>\n",
			c.Rank, c.Rank, key, cls, esc(c.Summary), thousands(c.DistinctValues), mono, pct(c.HottestPartitionShare),
			pct(c.CurrentWrites.HottestKeyShare), esc(c.Throttle.Risk), esc(limit), fan)
	}
	b.WriteString("</tbody>\n</table>\n")

	for _, c := range rep.Candidates {
		fmt.Fprintf(&b, "<section class=\"candidate\" id=\"cand-%d\" data-key=\"%s\">\n", c.Rank, esc(c.Key))
		fmt.Fprintf(&b, "<h2>#%d <code>%s</code></h2>\n<p class=\"summary %s\">%s</p>\n", c.Rank, esc(c.Key),
			map[bool]string{true: "ok", false: "bad"}[len(c.Problems) == 0], esc(c.Summary))
		if c.Proposed != "" {
			fmt.Fprintf(&b, "<p class=\"note\">Proposed: %s</p>\n", esc(c.Proposed))
		}
		b.WriteString("<ul class=\"reasons\">\n")
		for _, r := range c.Reasons {
			fmt.Fprintf(&b, "<li>%s</li>\n", esc(r))
		}
		b.WriteString("</ul>\n<div class=\"charts\">\n")
		labels := make([]string, len(c.Partitions))
		storage := make([]float64, len(c.Partitions))
		writes := make([]float64, len(c.Partitions))
		for i, p := range c.Partitions {
			labels[i] = p.ID
			storage[i] = float64(p.Bytes)
			writes[i] = float64(p.CurrentWrites)
		}
		fair := 0.0
		if len(c.Partitions) > 1 {
			fair = float64(c.CurrentWrites.Documents) / float64(len(c.Partitions))
		}
		chart(&b, "Storage per physical partition", "storage", labels, storage, 0, func(v float64) string { return bytesText(v) })
		chart(&b, "Current writes per physical partition (dashed: fair share)", "writes", labels, writes, fair,
			func(v float64) string { return thousands(int(v)) + " writes" })
		freq := make([]float64, len(c.KeyFrequency.Top))
		flabels := make([]string, len(freq))
		for i, v := range c.KeyFrequency.Top {
			freq[i] = float64(v)
			flabels[i] = fmt.Sprint(i + 1)
		}
		chart(&b, "Key frequency: documents per logical partition, most frequent first", "keys", flabels, freq, 0,
			func(v float64) string { return thousands(int(v)) + " documents" })
		b.WriteString("</div>\n")
		if c.KeyFrequency.OthersKeys > 0 {
			fmt.Fprintf(&b, "<p class=\"note\">and %s more keys holding %s documents</p>\n", thousands(c.KeyFrequency.OthersKeys), thousands(c.KeyFrequency.OthersItems))
		}
		b.WriteString("<h3>Largest keys</h3>\n<table class=\"keys\"><thead><tr><th>Key</th><th>Documents</th><th>Bytes</th><th>Current writes</th><th>Load RU/s</th><th>Partition</th></tr></thead><tbody>\n")
		for _, k := range c.TopKeysByBytes[:min(5, len(c.TopKeysByBytes))] {
			fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
				esc(k.Key), thousands(k.Items), bytesText(float64(k.Bytes)), thousands(k.CurrentWrites), num(k.LoadRU), esc(k.Partition))
		}
		b.WriteString("</tbody></table>\n</section>\n")
	}
	b.WriteString(`<footer>Physical partitions are the equal-width hash ranges a new container of this size gets (the container's real ranges for its current key), with keys hashed exactly as the server does. "Current writes" are the most recent documents in insertion order. Generated by parsec advise.</footer>
<script>
(function () {
  var rows = document.querySelectorAll("tr.rank-row");
  rows.forEach(function (row) {
    row.addEventListener("click", function () {
      var target = document.getElementById(row.getAttribute("data-target"));
      if (!target) return;
      document.querySelectorAll(".active").forEach(function (e) { e.classList.remove("active"); });
      row.classList.add("active");
      target.classList.add("active");
      target.scrollIntoView({ behavior: "smooth", block: "start" });
    });
  });
})();
</script>
</body>
</html>
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// chart writes a bar chart as inline SVG: one bar per value, a label under
// each (every few when there are many), a dashed reference line at ref if
// it is positive, and a tooltip per bar.
func chart(b *strings.Builder, title, class string, labels []string, values []float64, ref float64, show func(float64) string) {
	const width, height, left, right, top, bottom = 480.0, 190.0, 54.0, 8.0, 10.0, 24.0
	esc := html.EscapeString
	fmt.Fprintf(b, "<div class=\"chart-box\"><h3>%s</h3>\n", esc(title))
	fmt.Fprintf(b, "<svg class=\"chart %s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"%s\">\n", class, width, height, esc(title))
	peak := ref
	for _, v := range values {
		peak = max(peak, v)
	}
	if peak <= 0 {
		peak = 1
	}
	plotW, plotH := width-left-right, height-top-bottom
	fmt.Fprintf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c5cad6\"/>\n", left, top+plotH, width-right, top+plotH)
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", left-4, top+8, esc(shortValue(show(peak))))
	fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0</text>\n", left-4, top+plotH)
	n := len(values)
	if n > 0 {
		slot := plotW / float64(n)
		gap := min(slot*0.2, 6)
		every := max(1, n/16)
		for i, v := range values {
			h := v / peak * plotH
			if v > 0 && h < 1 {
				h = 1
			}
			x := left + float64(i)*slot + gap/2
			fmt.Fprintf(b, "<rect class=\"bar %s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"><title>%s: %s</title></rect>\n",
				class, x, top+plotH-h, slot-gap, h, esc(labels[i]), esc(show(v)))
			if i%every == 0 {
				fmt.Fprintf(b, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x+(slot-gap)/2, top+plotH+14, esc(labels[i]))
			}
		}
	}
	if ref > 0 {
		y := top + plotH - ref/peak*plotH
		fmt.Fprintf(b, "<line class=\"fair\" x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\"/>\n", left, y, width-right, y)
	}
	b.WriteString("</svg></div>\n")
}

// shortValue drops a trailing unit word from an axis label.
func shortValue(s string) string {
	if i := strings.LastIndexByte(s, ' '); i > 0 && !strings.ContainsAny(s[i:], "0123456789") && len(s[i+1:]) > 2 {
		return s[:i]
	}
	return s
}
