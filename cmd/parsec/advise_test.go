package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
	"github.com/parsecdb/parsec/synthkey"
)

// reading is one IoT telemetry document.
type reading struct {
	ID          string  `json:"id"`
	DeviceID    string  `json:"deviceId"`
	VIN         string  `json:"vin"`
	Date        string  `json:"date"`
	Ts          int64   `json:"ts"`
	SysTs       int64   `json:"_ts"`
	Temperature float64 `json:"temperature"`
}

// iotReadings generates n readings in time order over the given days from
// 2024-03-01: devices report with Zipf-distributed activity (exponent 0.7),
// each device has one VIN. The generator is seeded, so the sample is the
// same on every run.
func iotReadings(n, devices, days int) []reading {
	r := rand.New(rand.NewPCG(42, 7))
	cum := make([]float64, devices)
	total := 0.0
	for k := range devices {
		total += 1 / math.Pow(float64(k+1), 0.7)
		cum[k] = total
	}
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC).Unix()
	out := make([]reading, n)
	for i := range out {
		dev, _ := slices.BinarySearch(cum, r.Float64()*total)
		dev = min(dev, devices-1)
		ts := start + int64(i)*int64(days)*86400/int64(n)
		out[i] = reading{
			ID: fmt.Sprintf("r-%06d", i), DeviceID: fmt.Sprintf("dev-%04d", dev), VIN: fmt.Sprintf("1FTVIN%011d", dev*7919),
			Date: time.Unix(ts, 0).UTC().Format("2006-01-02"), Ts: ts, SysTs: ts,
			Temperature: math.Round((20+5*math.Sin(float64(ts)/86400*2*math.Pi)+r.NormFloat64())*100) / 100,
		}
	}
	return out
}

func writeNDJSON(t *testing.T, path string, rs []reading) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// adviseJSON is the part of the JSON report the tests read.
type adviseJSON struct {
	Partitions     int    `json:"partitions"`
	PartitionsFrom string `json:"partitionsFrom"`
	Source         struct {
		Documents int  `json:"documents"`
		Live      bool `json:"live"`
	} `json:"source"`
	CurrentWindow struct {
		Documents  int `json:"documents"`
		FirstIndex int `json:"firstIndex"`
	} `json:"currentWindow"`
	Observed   []json.RawMessage `json:"observed"`
	Warnings   []string          `json:"warnings"`
	Candidates []struct {
		Key                   string  `json:"key"`
		Rank                  int     `json:"rank"`
		Current               bool    `json:"current"`
		DistinctValues        int     `json:"distinctValues"`
		Monotonic             bool    `json:"monotonic"`
		HottestPartitionShare float64 `json:"hottestPartitionShare"`
		Partitions            []struct {
			ID            string `json:"id"`
			Min           string `json:"minInclusive"`
			Max           string `json:"maxExclusive"`
			Items         int    `json:"items"`
			CurrentWrites int    `json:"currentWrites"`
		} `json:"partitionStats"`
		Problems []string `json:"problems"`
		Reasons  []string `json:"reasons"`
	} `json:"candidates"`
}

func runAdvise(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = advise(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestAdviseIoT runs the advisor through the command on a month of IoT
// telemetry and checks its verdicts and counts against a computation made
// here from the key definitions, with epk and synthkey's hash directly.
func TestAdviseIoT(t *testing.T) {
	rs := iotReadings(50000, 1000, 30)
	path := filepath.Join(t.TempDir(), "iot.ndjson")
	writeNDJSON(t, path, rs)
	const hashKey = `concat(/date, ".", hash(/vin, 400))`
	htmlPath := filepath.Join(t.TempDir(), "report.html")
	code, out, errs := runAdvise(t, "--sample", path, "--candidate", "/date", "--candidate", "/deviceId",
		"--candidate", hashKey, "--partitions", "4", "--json", "--html", htmlPath)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep adviseJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if rep.Partitions != 4 || len(rep.Candidates) != 3 || rep.Source.Documents != 50000 {
		t.Fatalf("partitions %d, candidates %d, documents %d", rep.Partitions, len(rep.Candidates), rep.Source.Documents)
	}
	rank := map[string]int{}
	for i, c := range rep.Candidates {
		if c.Rank != i+1 {
			t.Errorf("candidate %d has rank %d", i, c.Rank)
		}
		rank[c.Key] = c.Rank
	}
	for _, k := range []string{"/date", "/deviceId", hashKey} {
		if rank[k] == 0 {
			t.Fatalf("no candidate %q (keys must be the expressions as given)", k)
		}
	}
	get := func(key string) int { return rank[key] - 1 }
	date, hashed := rep.Candidates[get("/date")], rep.Candidates[get(hashKey)]
	if !date.Monotonic || date.HottestPartitionShare < 0.95 {
		t.Errorf("/date: monotonic %v, hottest partition share %v", date.Monotonic, date.HottestPartitionShare)
	}
	if !strings.Contains(date.Reasons[0], "monotonic: 100% of current writes go to one logical partition (2024-03-30)") {
		t.Errorf("/date reason: %q", date.Reasons[0])
	}
	if hashed.HottestPartitionShare > 0.35 || hashed.HottestPartitionShare < 0.25 {
		t.Errorf("hash suffix: hottest partition share %v, want about 1/4", hashed.HottestPartitionShare)
	}
	if hashed.Rank >= date.Rank {
		t.Errorf("hash suffix ranked %d, /date %d", hashed.Rank, date.Rank)
	}

	// The same figures computed here.
	w := max(int(math.Ceil(0.02*float64(len(rs)))), 200)
	if rep.CurrentWindow.Documents != w {
		t.Errorf("window %d, want %d", rep.CurrentWindow.Documents, w)
	}
	keyOf := map[string]func(reading) string{
		"/date":     func(r reading) string { return r.Date },
		"/deviceId": func(r reading) string { return r.DeviceID },
		hashKey:     func(r reading) string { return r.Date + "." + strconv.Itoa(synthkey.Hash(r.VIN, 400)) },
	}
	for key, f := range keyOf {
		c := rep.Candidates[get(key)]
		def := epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/pk"}}
		ranges := def.EvenRanges(4)
		distinct := map[string]bool{}
		cur := make([]int, 4)
		items := make([]int, 4)
		for i, r := range rs {
			k := f(r)
			distinct[k] = true
			e, err := def.EPK(epk.Key{epk.String(k)})
			if err != nil {
				t.Fatal(err)
			}
			p := slices.IndexFunc(ranges, func(x epk.Range) bool { return x.Contains(e) })
			items[p]++
			if i >= len(rs)-w {
				cur[p]++
			}
		}
		if c.DistinctValues != len(distinct) {
			t.Errorf("%s: distinctValues %d, want %d", key, c.DistinctValues, len(distinct))
		}
		if len(c.Partitions) != 4 {
			t.Fatalf("%s: %d partitions", key, len(c.Partitions))
		}
		hot := 0
		for i, p := range c.Partitions {
			if p.CurrentWrites != cur[i] || p.Items != items[i] || p.Min != ranges[i].Min || p.Max != ranges[i].Max {
				t.Errorf("%s partition %d: current %d items %d [%s,%s); want %d %d %s", key, i, p.CurrentWrites, p.Items, p.Min, p.Max, cur[i], items[i], ranges[i])
			}
			hot = max(hot, cur[i])
		}
		if want := float64(hot) / float64(w); math.Abs(c.HottestPartitionShare-want) > 1e-4 {
			t.Errorf("%s: hottestPartitionShare %v, want %v", key, c.HottestPartitionShare, want)
		}
	}

	html, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<rect class="bar writes"`); n != 12 {
		t.Errorf("HTML has %d current-write bars, want 12", n)
	}

	// The table names every candidate with its rank.
	code, table, errs := runAdvise(t, "--sample", path, "--candidate", "/date", "--candidate", hashKey, "--partitions", "4")
	if code != 0 || !strings.Contains(table, "1     "+hashKey) || !strings.Contains(table, "2     /date") {
		t.Errorf("table (exit %d, %s):\n%s", code, errs, table)
	}
}

// TestAdviseProposes runs without candidates: proposals come from the data.
func TestAdviseProposes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "iot.json")
	rs := iotReadings(5000, 200, 10)
	b, _ := json.Marshal(rs)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runAdvise(t, "--sample", path, "--throughput", "30000", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep adviseJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range rep.Candidates {
		keys = append(keys, c.Key)
	}
	for _, want := range []string{"/deviceId", "/date", `concat(/date, ".", hash(/deviceId, 400))`, `concat(/date, ".", random(1, 400))`} {
		if !slices.Contains(keys, want) {
			t.Errorf("no proposal %s in %q", want, keys)
		}
	}
	if rep.Partitions != 3 || rep.PartitionsFrom != "--throughput" {
		t.Errorf("partitions %d from %s", rep.Partitions, rep.PartitionsFrom)
	}
	if rep.Candidates[len(rep.Candidates)-1].Key != "/date" {
		t.Errorf("/date is not last: %q", keys)
	}
}

// TestAdviseBadInput checks each kind of bad input: the message and the
// exit status (2 for usage, 1 for input that cannot be used).
func TestAdviseBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.ndjson", "{\"id\":\"1\",\"a\":\"x\"}\n{\"id\":\"2\",\"a\":\"y\"}\n")
	empty := write("empty.json", "  \n")
	emptyArray := write("empty-array.json", "[]")
	broken := write("broken.ndjson", "{\"id\":\"1\"}\n{\"id\":\"2\"}\n{\"id\": \"3\",, }\n")
	brokenArray := write("broken.json", "[\n  {\"id\": \"1\"},\n  {\"id\": 2\n]")
	badWorkload := write("w.ndjson", "{\"op\":\"read\",\"rate\":1}\n{\"op\":\"scan\"}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"unreadable sample", []string{"--sample", filepath.Join(dir, "missing.json")}, 1, []string{"cannot read the sample", "missing.json"}},
		{"empty sample", []string{"--sample", empty}, 1, []string{"holds no documents"}},
		{"empty array", []string{"--sample", emptyArray}, 1, []string{"holds no documents"}},
		{"invalid NDJSON", []string{"--sample", broken}, 1, []string{"line 3, column 12", "invalid JSON"}},
		{"invalid array", []string{"--sample", brokenArray}, 1, []string{"line 4, column 1", "invalid character ']'"}},
		{"invalid expression", []string{"--sample", good, "--candidate", "concat(/a, random(1))"}, 2,
			[]string{`--candidate "concat(/a, random(1))"`, "synthkey: at column", "^"}},
		{"unknown option", []string{"--sample", good, "--frobnicate"}, 2, []string{"flag provided but not defined: -frobnicate"}},
		{"partitions and throughput", []string{"--sample", good, "--partitions", "2", "--throughput", "20000"}, 2, []string{"--partitions or --throughput, not both"}},
		{"zero partitions", []string{"--sample", good, "--partitions", "0"}, 2, []string{"--partitions must be at least 1"}},
		{"live without argument", []string{"--live"}, 2, []string{"flag needs an argument: -live"}},
		{"live without container", []string{"--live", "onlydb"}, 2, []string{"--live wants DATABASE/CONTAINER", `"onlydb"`}},
		{"live and sample", []string{"--live", "d/c", "--sample", good}, 2, []string{"either --sample FILE or --live"}},
		{"nothing to read", []string{"--partitions", "3"}, 2, []string{"give --sample FILE"}},
		{"stray argument", []string{"--sample", good, "extra"}, 2, []string{`unexpected argument "extra"`}},
		{"bad growth", []string{"--sample", good, "--growth", "lots"}, 2, []string{"--growth", "not a growth rate"}},
		{"bad workload", []string{"--sample", good, "--workload", badWorkload}, 1, []string{"line 2", `op "scan"`}},
		{"missing workload", []string{"--sample", good, "--workload", filepath.Join(dir, "nope")}, 1, []string{"cannot read the workload"}},
		{"unreachable server", []string{"--live", "d/c", "--endpoint", "http://127.0.0.1:1"}, 1, []string{"cannot reach"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runAdvise(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, errs)
			}
			for _, w := range tc.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if out != "" {
				t.Errorf("stdout not empty: %s", out)
			}
		})
	}
	if code, _, errs := runAdvise(t, "--help"); code != 0 || !strings.Contains(errs, "--candidate") {
		t.Errorf("--help: exit %d\n%s", code, errs)
	}
}

// TestAdviseLive reads a container of a running server: its current key is
// a candidate on the container's real ranges, and the telemetry comes along.
func TestAdviseLive(t *testing.T) {
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	e := s.Engine()
	if _, err := e.CreateDatabase("iot", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	def := epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/deviceId"}}
	if _, err := e.CreateContainer("iot", engine.ContainerSpec{ID: "readings", PartitionKey: def}, engine.Throughput{RUs: 24000}); err != nil {
		t.Fatal(err)
	}
	c, err := e.Container("iot", "readings")
	if err != nil {
		t.Fatal(err)
	}
	rs := iotReadings(1500, 100, 3)
	for _, r := range rs {
		r.SysTs = 0
		body, _ := json.Marshal(r)
		op, err := c.PrepareWrite(engine.OpCreate, body, epk.Key{epk.String(r.DeviceID)}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Execute(&engine.Command{Ops: []engine.Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errs := runAdvise(t, "--live", "iot/readings", "--endpoint", s.URL(), "--candidate", "/date", "--json", "--page-size", "400")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "read 1,500 documents") {
		t.Errorf("no progress on stderr: %s", errs)
	}
	var rep adviseJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Source.Live || rep.Source.Documents != len(rs) || rep.Partitions != 4 || rep.PartitionsFrom != "the container's ranges" {
		t.Errorf("source %+v, partitions %d from %q", rep.Source, rep.Partitions, rep.PartitionsFrom)
	}
	if len(rep.Observed) != 4 {
		t.Errorf("observed %d partitions", len(rep.Observed))
	}
	var current *int
	for i, cand := range rep.Candidates {
		if cand.Current {
			current = &i
		}
	}
	if current == nil || len(rep.Candidates) != 2 {
		t.Fatalf("candidates %+v", rep.Candidates)
	}
	cur := rep.Candidates[*current]
	if cur.Key != "/deviceId" || cur.DistinctValues != 100 {
		t.Errorf("current key %q, %d values", cur.Key, cur.DistinctValues)
	}
	ranges, _ := c.Ranges()
	for i, p := range cur.Partitions {
		if p.ID != ranges[i].ID || p.Min != ranges[i].Min || p.Max != ranges[i].Max {
			t.Errorf("partition %d: %s [%s,%s), want the container's %s [%s,%s)", i, p.ID, p.Min, p.Max, ranges[i].ID, ranges[i].Min, ranges[i].Max)
		}
	}
	// Items per partition as the server stores them.
	stats, err := c.Stats(1)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range cur.Partitions {
		if int64(p.Items) != stats[i].Items {
			t.Errorf("partition %s: %d items, server has %d", p.ID, p.Items, stats[i].Items)
		}
	}
}

// --max-sample-bytes bounds the documents the analysis holds: over a
// larger sample it analyzes one in every 2^k, and the report says so.
func TestAdviseSampleBudget(t *testing.T) {
	rs := iotReadings(4000, 100, 30)
	path := filepath.Join(t.TempDir(), "iot.ndjson")
	writeNDJSON(t, path, rs)
	code, out, errs := runAdvise(t, "--sample", path, "--candidate", "/deviceId", "--partitions", "4", "--json", "--max-sample-bytes", "100KiB")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep adviseJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if rep.Source.Documents >= len(rs) || rep.Source.Documents < 100 {
		t.Errorf("%d documents analyzed of %d, want a sample within 100 KiB", rep.Source.Documents, len(rs))
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "the sample's budget of 102400 bytes") {
		t.Errorf("warnings %q, want one saying the sample was capped", rep.Warnings)
	}
	if !strings.Contains(errs, "the sample's budget of 102400 bytes") {
		t.Errorf("nothing said on standard error that the sample was capped: %s", errs)
	}
}
