package advise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/throughput"
	"github.com/parsecdb/parsec/synthkey"
)

func near(a, b, eps float64) bool { return math.Abs(a-b) <= eps }

func TestStats(t *testing.T) {
	if g := gini([]float64{1, 1, 1, 1}); g != 0 {
		t.Errorf("gini even = %v", g)
	}
	if g := gini([]float64{0, 0, 0, 8}); !near(g, 0.75, 1e-12) {
		t.Errorf("gini all on one of 4 = %v, want 0.75", g)
	}
	// 1,2,3,4: 2·(1+4+9+16)/(4·10) − 5/4 = 1.5 − 1.25 = 0.25
	if g := gini([]float64{4, 2, 3, 1}); !near(g, 0.25, 1e-12) {
		t.Errorf("gini 1..4 = %v, want 0.25", g)
	}
	if m := maxOverMean([]float64{0, 0, 0, 8}); m != 4 {
		t.Errorf("maxOverMean = %v", m)
	}
	if r := pearson([]float64{1, 2, 3}, []float64{2, 4, 6}); !near(r, 1, 1e-12) {
		t.Errorf("pearson = %v", r)
	}
	if r := pearson([]float64{1, 2, 3}, []float64{3, 2, 1}); !near(r, -1, 1e-12) {
		t.Errorf("pearson = %v", r)
	}
	if got := midranks([]int{2, 1, 3}); !slices.Equal(got, []float64{1.5, 3, 5}) {
		t.Errorf("midranks = %v", got)
	}
	if s := evenShareLimit(1, 100); s != 1 {
		t.Errorf("evenShareLimit(1) = %v", s)
	}
	// N=4, W=1000: min(0.375, 0.45) + 3·sqrt(0.25·0.75/1000)
	if s := evenShareLimit(4, 1000); !near(s, 0.375+3*math.Sqrt(0.1875/1000), 1e-12) {
		t.Errorf("evenShareLimit(4,1000) = %v", s)
	}
}

// readDocuments reads every document of data.
func readDocuments(data []byte) ([]Document, error) {
	s := NewSample(0)
	err := ReadDocuments(data, s, nil)
	return s.Documents(), err
}

func TestReadDocuments(t *testing.T) {
	docs, err := readDocuments([]byte("\xEF\xBB\xBF[\n {\"id\":\"a\", \"_ts\": 5},\n {\"id\":\"b\"}\n]\n"))
	if err != nil || len(docs) != 2 || !docs[0].HasTs || docs[0].Ts != 5 || docs[1].HasTs {
		t.Fatalf("array: %v %+v", err, docs)
	}
	if string(docs[0].Raw) != `{"id":"a","_ts":5}` {
		t.Errorf("raw not compact: %s", docs[0].Raw)
	}
	docs, err = readDocuments([]byte("{\"id\":\"a\"}\n\n  {\"id\":\"b\"}\r\n{\"id\":\"c\"}"))
	if err != nil || len(docs) != 3 {
		t.Fatalf("ndjson: %v %d", err, len(docs))
	}
	for _, tc := range []struct {
		in         string
		line, col  int
		msgContain string
	}{
		{"{\"a\":1}\n{\"b\": 2,}\n", 2, 9, "invalid JSON"},
		{"{\"a\":1}\n[1]\n", 2, 1, "expected a JSON object"},
		{"{\"a\":1}\n{\"b\":\n", 2, 6, "unexpected end"},
		{"[\n {\"a\":1},\n {\"b\": 2,}\n]", 3, 10, "invalid character '}'"},
		{"[\n {\"a\":1},\n 5\n]", 3, 2, "element 2 of the array is not a JSON object"},
		{"[{\"a\":1}", 1, 9, "unexpected end"},
	} {
		_, err := readDocuments([]byte(tc.in))
		var se *SampleError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v is not a SampleError", tc.in, err)
			continue
		}
		if se.Line != tc.line || se.Column != tc.col || !strings.Contains(se.Msg, tc.msgContain) {
			t.Errorf("%q: got %v; want line %d column %d containing %q", tc.in, se, tc.line, tc.col, tc.msgContain)
		}
	}
	for _, in := range []string{"", "  \n\n", "[]", "[ ]\n"} {
		if _, err := readDocuments([]byte(in)); !errors.Is(err, ErrEmptySample) {
			t.Errorf("%q: %v, want ErrEmptySample", in, err)
		}
	}
}

func TestParseWorkload(t *testing.T) {
	ops, err := ParseWorkload([]byte(`# comment
{"op":"read","filter":{"deviceId":"d1","/date":"2024-03-30"},"rate":5}

{"pattern":"SELECT * FROM c WHERE c.deviceId = @d","fields":["/deviceId"],"rate":120}
// another comment
{"op":"write"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 || ops[0].Op != "read" || ops[0].Rate != 5 || ops[0].Filter["deviceId"] != "d1" || ops[0].canonFilter["date"] != "2024-03-30" {
		t.Fatalf("ops[0] = %+v", ops[0])
	}
	if ops[1].Op != "query" || ops[1].canonFields[0] != "deviceId" || ops[1].Rate != 120 || ops[1].Line != 4 {
		t.Fatalf("ops[1] = %+v", ops[1])
	}
	if ops[2].Rate != 1 {
		t.Errorf("default rate = %v", ops[2].Rate)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"op":"delete"}`, `line 1: op "delete"`},
		{"\n{\"op\":\"read\",\"bogus\":1}", `line 2: unknown member "bogus"`},
		{`{"op":"read","filter":{"/a":{"x":1}}}`, "must be a string, number, boolean or null"},
		{`{"rate":3}`, `missing "op"`},
		{`{"op":"read","rate":-1}`, "rate must be"},
		{`{"op":"read"`, "line 1: invalid JSON"},
		{`{"op":"read","filter":{"/a":1},"fields":["a"]}`, "both in filter and in fields"},
	} {
		_, err := ParseWorkload([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestParseGrowth(t *testing.T) {
	for _, tc := range []struct {
		in         string
		docs, byts float64
	}{
		{"50000", 50000, 0},
		{"50000/day", 50000, 0},
		{"50000 docs/day", 50000, 0},
		{"1000/h", 24000, 0},
		{"2/s", 172800, 0},
		{"2GB/day", 0, 2e9},
		{"1 GiB/d", 0, 1 << 30},
		{"1MB/h", 0, 24e6},
	} {
		g, err := ParseGrowth(tc.in)
		if err != nil || g.DocumentsPerDay != tc.docs || g.BytesPerDay != tc.byts {
			t.Errorf("%q: %+v %v", tc.in, g, err)
		}
	}
	for _, in := range []string{"", "fast", "-5/day", "5/week", "0", "GB/day"} {
		if _, err := ParseGrowth(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// doc builds a sample document.
func doc(t *testing.T, s string) Document {
	t.Helper()
	d, err := NewDocument([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestAnalyzeExact checks the per-partition and per-key figures against a
// computation done here with epk directly.
func TestAnalyzeExact(t *testing.T) {
	var docs []Document
	// 500 documents over 37 tenants (tenant i gets i%7+1 weight), in order.
	for i := range 500 {
		tenant := fmt.Sprintf("t%02d", (i*i+3*i)%37)
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"%d","tenant":%q,"n":%d,"pad":%q}`, i, tenant, i, strings.Repeat("x", i%50))))
	}
	const n = 5
	rep, err := Analyze(docs, Options{Candidates: []Candidate{{Expr: "/tenant"}}, Partitions: n})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Candidates[0]
	def := epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/tenant"}}
	ranges := def.EvenRanges(n)
	items := make([]int, n)
	bytes := make([]int64, n)
	cur := make([]int, n)
	keys := map[string]bool{}
	w := max(int(math.Ceil(0.02*500)), 200)
	for i, d := range docs {
		tenant := d.Value["tenant"].(string)
		keys[tenant] = true
		e, err := def.EPK(epk.Key{epk.String(tenant)})
		if err != nil {
			t.Fatal(err)
		}
		p := slices.IndexFunc(ranges, func(r epk.Range) bool { return r.Contains(e) })
		items[p]++
		bytes[p] += int64(len(d.Raw))
		if i >= 500-w {
			cur[p]++
		}
	}
	if c.DistinctValues != len(keys) {
		t.Errorf("distinctValues = %d, want %d", c.DistinctValues, len(keys))
	}
	hot := 0
	for i, p := range c.Partitions {
		if p.Items != items[i] || p.Bytes != bytes[i] || p.CurrentWrites != cur[i] {
			t.Errorf("partition %d: items %d bytes %d current %d; want %d %d %d", i, p.Items, p.Bytes, p.CurrentWrites, items[i], bytes[i], cur[i])
		}
		if p.Min != ranges[i].Min || p.Max != ranges[i].Max {
			t.Errorf("partition %d range [%s,%s), want %s", i, p.Min, p.Max, ranges[i])
		}
		if cur[i] > cur[hot] {
			hot = i
		}
	}
	if c.CurrentWrites.Documents != w || c.HottestPartitionShare != round(float64(cur[hot])/float64(w), 4) {
		t.Errorf("current %d, hottest share %v; want %d, %v", c.CurrentWrites.Documents, c.HottestPartitionShare, w, float64(cur[hot])/float64(w))
	}
	fb := make([]float64, n)
	for i := range bytes {
		fb[i] = float64(bytes[i])
	}
	if !near(c.StorageSkew.Gini, gini(fb), 1e-4) || !near(c.StorageSkew.MaxOverMean, maxOverMean(fb), 1e-3) {
		t.Errorf("storage skew %+v", c.StorageSkew)
	}
	if c.Throttle.Risk != "unknown" {
		t.Errorf("risk without a rate = %q", c.Throttle.Risk)
	}
}

func TestMonotonicAndHotSpot(t *testing.T) {
	var docs []Document
	for i := range 1000 {
		day := fmt.Sprintf("2024-01-%02d", 1+i/100) // 10 days, in order
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"i%d","day":%q,"user":"u%d","_ts":%d}`, i, day, (i*7919)%300, 1704067200+i*2160)))
	}
	rep, err := Analyze(docs, Options{Candidates: []Candidate{{Expr: "/day"}, {Expr: "/user"}, {Expr: `concat(/day, ".", hash(/user, 50))`}}, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]CandidateReport{}
	for _, c := range rep.Candidates {
		by[c.Key] = c
	}
	day := by["/day"]
	if !day.Monotonic || day.Monotonicity < 0.99 {
		t.Errorf("/day monotonicity %v", day.Monotonicity)
	}
	if by["/user"].Monotonic {
		t.Errorf("/user monotonic (%v)", by["/user"].Monotonicity)
	}
	// The window is the last 200 documents: days 9 and 10.
	if day.CurrentWrites.DistinctKeys != 2 {
		t.Errorf("/day current keys = %d", day.CurrentWrites.DistinctKeys)
	}
	if !slices.Contains(day.Problems, ProblemUneven) {
		t.Errorf("/day problems %v", day.Problems)
	}
	if rep.Candidates[len(rep.Candidates)-1].Key != "/day" {
		t.Errorf("/day not ranked last: %v", keysOf(rep))
	}
	// Reversed order: strongly negative, not monotonic.
	slices.Reverse(docs)
	rep, _ = Analyze(docs, Options{Candidates: []Candidate{{Expr: "/day"}}, Partitions: 4})
	if c := rep.Candidates[0]; c.Monotonic || c.Monotonicity > -0.99 {
		t.Errorf("reversed: %v %v", c.Monotonic, c.Monotonicity)
	}
}

func keysOf(rep *Report) []string {
	var out []string
	for _, c := range rep.Candidates {
		out = append(out, c.Key)
	}
	return out
}

// TestThrottleAndLimit checks the RU and 20 GB projections exactly.
func TestThrottleAndLimit(t *testing.T) {
	var docs []Document
	for i := range 400 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"i%03d","k":"only"}`, i)))
	}
	charge := throughput.WriteCharge(len(docs[0].Raw), jsondoc.Terms(docs[0].Raw))
	rate := 3000.0
	rep, err := Analyze(docs, Options{
		Candidates: []Candidate{{Expr: "/k"}, {Expr: "/id"}},
		Throughput: 20000,
		Workload:   []Operation{{Op: "write", Rate: rate}},
		Growth:     Growth{BytesPerDay: 1e9},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Partitions != 2 || rep.PartitionBudgetRU != 10000 || rep.WriteRate != rate {
		t.Fatalf("layout %d partitions, budget %v, rate %v", rep.Partitions, rep.PartitionBudgetRU, rep.WriteRate)
	}
	k := rep.Candidates[1]
	if k.Key != "/k" {
		t.Fatalf("order %v", keysOf(rep))
	}
	if want := rate * charge; !near(k.Throttle.HottestPartitionRU, want, 0.01) || k.Throttle.Risk != "high" || !k.Throttle.HotKeyOverPartition {
		t.Errorf("throttle %+v, want %v RU/s high", k.Throttle, want)
	}
	if want := 10000 / charge; !near(k.Throttle.MaxWriteRate, want, 0.01) {
		t.Errorf("maxWriteRate %v, want %v", k.Throttle.MaxWriteRate, want)
	}
	// One key takes all growth: (20e9 − bytes) / 1e9 days.
	var total int64
	for _, d := range docs {
		total += int64(len(d.Raw))
	}
	want := (20e9 - float64(total)) / 1e9
	if k.LogicalLimit.DaysTo20GB == nil || !near(*k.LogicalLimit.DaysTo20GB, want, 0.01) || k.LogicalLimit.Risk != "high" {
		t.Errorf("limit %+v, want %v days", k.LogicalLimit, want)
	}
	id := rep.Candidates[0]
	if id.Throttle.Risk == "high" || id.LogicalLimit.Risk != "none" || len(id.Problems) != 0 {
		t.Errorf("/id: %+v %+v %v", id.Throttle, id.LogicalLimit, id.Problems)
	}
}

func TestWorkloadRouting(t *testing.T) {
	var docs []Document
	for i := range 300 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"i%d","tenant":"t%d","user":"u%d","date":"2024-02-%02d"}`, i, i%3, i%40, 1+i/20)))
	}
	ops, err := ParseWorkload([]byte(`{"name":"by tenant","op":"query","fields":["/tenant"],"rate":10}
{"name":"by user","op":"query","fields":["/user"],"rate":30}
{"name":"point","op":"read","fields":["/tenant","/user","/date"],"rate":60}
{"name":"hot write","op":"write","filter":{"/tenant":"t1","/user":"u7"},"rate":5}
`))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Analyze(docs, Options{Workload: ops, Partitions: 8, Candidates: []Candidate{
		{Expr: "[/tenant, /user]"}, {Expr: "/user"}, {Expr: `concat(/date, ".", random(1, 10))`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	route := func(key, op string) OpRoute {
		for _, c := range rep.Candidates {
			if c.Key == key {
				for _, o := range c.Queries.Operations {
					if o.Name == op {
						return o
					}
				}
			}
		}
		t.Fatalf("no %s / %s", key, op)
		return OpRoute{}
	}
	if r := route("[/tenant, /user]", "by tenant"); r.Routing != "prefix" || r.PartitionsTouched > 2 {
		t.Errorf("prefix route %+v", r)
	}
	if r := route("[/tenant, /user]", "by user"); r.Routing != "all" || r.PartitionsTouched != 8 || !near(r.RU, 30*8*throughput.QueryBaseCharge, 1e-6) {
		t.Errorf("fan-out route %+v", r)
	}
	if r := route("/user", "by user"); r.Routing != "single" || r.PartitionsTouched != 1 {
		t.Errorf("single route %+v", r)
	}
	if r := route(`concat(/date, ".", random(1, 10))`, "point"); r.Routing != "keys" || r.Keys != 10 {
		t.Errorf("random route %+v", r)
	}
	if r := route("[/tenant, /user]", "hot write"); !strings.Contains(r.Note, `["t1","u7"]`) {
		t.Errorf("targeted write %+v", r)
	}
	for _, c := range rep.Candidates {
		if c.Key == "/user" {
			// by tenant fans out (10), by user single (30), point single (60).
			if !near(c.Queries.SinglePartitionShare, 0.9, 1e-9) {
				t.Errorf("/user single share %v", c.Queries.SinglePartitionShare)
			}
		}
	}
	if rep.Candidates[0].Key != "[/tenant, /user]" && rep.Candidates[0].Key != "/user" {
		t.Errorf("ranking %v", keysOf(rep))
	}
}

func TestProposeIoT(t *testing.T) {
	var docs []Document
	for i := range 3000 {
		dev := (i * 7) % 97
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"%x","deviceId":"dev-%03d","vin":"VIN%05d","region":"r%d","date":"2024-05-%02d","temperature":%.2f,"ok":true}`,
			i*2654435761%1000003, dev, dev*31, dev%4, 1+i/100, 20+float64(i%13)/7)))
	}
	var got []string
	for _, c := range Propose(docs, 4) {
		got = append(got, c.Expr)
	}
	want := []string{"/id", "/deviceId", "/vin", "/date", `concat(/date, ".", hash(/deviceId, 400))`, `concat(/date, ".", random(1, 400))`}
	if !slices.Equal(got, want) {
		t.Errorf("proposed %q\nwant     %q", got, want)
	}
}

func TestProposePairs(t *testing.T) {
	var docs []Document
	for i := range 2000 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"tenant":"t%d","user":"u%d"}`, i%5, (i/5)%30)))
	}
	var got []string
	for _, c := range Propose(docs, 2) {
		got = append(got, c.Expr)
	}
	want := []string{"/user", `concat(/tenant, "-", /user)`, "[/tenant, /user]"}
	if !slices.Equal(got, want) {
		t.Errorf("proposed %q, want %q", got, want)
	}
}

func TestExprError(t *testing.T) {
	_, err := Analyze([]Document{doc(t, `{"a":1}`)}, Options{Candidates: []Candidate{{Expr: "concat(/a, random(1))"}}})
	var ee *ExprError
	var se *synthkey.SyntaxError
	if !errors.As(err, &ee) || !errors.As(err, &se) || !strings.Contains(err.Error(), "column") {
		t.Fatalf("error %v", err)
	}
}

func TestUndefinedAndFailed(t *testing.T) {
	docs := []Document{doc(t, `{"a":"x","b":1}`), doc(t, `{"b":2}`), doc(t, `{"a":{"o":1}}`)}
	rep, err := Analyze(docs, Options{Candidates: []Candidate{{Expr: "/a"}, {Expr: `concat(/a, "-", /b)`}}, Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Candidates {
		switch c.Key {
		case "/a":
			if c.UndefinedItems != 1 || c.FailedItems != 1 || c.DistinctValues != 2 {
				t.Errorf("/a: %+v", c)
			}
		default:
			if c.FailedItems != 2 || c.DistinctValues != 1 {
				t.Errorf("concat: failed %d distinct %d", c.FailedItems, c.DistinctValues)
			}
		}
	}
}

func TestLiveCurrentKeyV1(t *testing.T) {
	// A version 1 container's key is hashed with V1 on its real ranges.
	def := epk.Definition{Kind: epk.Hash, Version: 1, Paths: []string{"/k"}}
	ranges := EvenLayout(def, 3)
	var docs []Document
	for i := range 90 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"%d","k":"key%d"}`, i, i%30)))
	}
	rep, err := Analyze(docs, Options{Candidates: []Candidate{{Expr: "/k", Definition: &def, Ranges: ranges, Current: true}}, Partitions: 3, Live: true})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Candidates[0]
	for i := range 30 {
		e, _ := def.EPK(epk.Key{epk.String(fmt.Sprintf("key%d", i))})
		p := locate(ranges, e)
		if !(epk.Range{Min: ranges[p].Min, Max: ranges[p].Max}).Contains(e) {
			t.Fatalf("locate(%s) = %d", e, p)
		}
	}
	if c.Definition.Version != 1 || !c.Current || len(c.Partitions) != 3 {
		t.Errorf("%+v", c)
	}
}

func TestOutputs(t *testing.T) {
	var docs []Document
	for i := range 600 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"i%d","day":"2024-01-%02d","dev":"<d%d>","_ts":%d}`, i, 1+i/30, i%53, 1704067200+i*1440)))
	}
	rep, err := Analyze(docs, Options{Partitions: 3, SourceName: "s.json"})
	if err != nil {
		t.Fatal(err)
	}
	var tb bytes.Buffer
	if err := WriteTable(&tb, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tb.String(), "RANK  KEY") || !strings.Contains(tb.String(), "1. ") {
		t.Errorf("table:\n%s", tb.String())
	}
	var hb bytes.Buffer
	if err := WriteHTML(&hb, rep); err != nil {
		t.Fatal(err)
	}
	h := hb.String()
	for _, bad := range []string{"<link", " src=", "http://", "https://", "@import", "url("} {
		if strings.Contains(h, bad) {
			t.Errorf("HTML refers to something outside: %q", bad)
		}
	}
	if strings.Count(h, `<section class="candidate"`) != len(rep.Candidates) || !strings.Contains(h, "&lt;d") {
		t.Errorf("HTML sections or escaping wrong")
	}
	if strings.Count(h, `<rect class="bar storage"`) != 3*len(rep.Candidates) {
		t.Errorf("storage bars: %d", strings.Count(h, `<rect class="bar storage"`))
	}
	b, err := json.Marshal(rep)
	if err != nil || !bytes.Contains(b, []byte(`"hottestPartitionShare"`)) {
		t.Errorf("json: %v", err)
	}
}

func TestObservedReason(t *testing.T) {
	def := epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/k"}}
	ranges := EvenLayout(def, 2)
	var docs []Document
	for i := range 50 {
		docs = append(docs, doc(t, fmt.Sprintf(`{"id":"%d","k":"key%d"}`, i, i%5)))
	}
	observed := []ObservedRange{
		{ID: "0", ConsumedRU: 300, Throttled: 7, TopKeysByRU: []KeyWeight{{Key: `["key3"]`, Weight: 120}}},
		{ID: "1", ConsumedRU: 100},
	}
	rep, err := Analyze(docs, Options{Candidates: []Candidate{{Expr: "/k", Definition: &def, Ranges: ranges, Current: true}},
		Partitions: 2, Live: true, Observed: observed})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Candidates[0]
	last := c.Reasons[len(c.Reasons)-1]
	want := `the container's current key; recorded: range 0 consumed 75% of the request units, 7 429s in all; hottest key by recent RU: ["key3"] (120 RU)`
	if last != want {
		t.Errorf("reason %q\nwant   %q", last, want)
	}
	if c.Partitions[0].ObservedRU != 300 || c.Partitions[0].ObservedThrottled != 7 {
		t.Errorf("observed not attached: %+v", c.Partitions[0])
	}
}

// A Sample keeps every document within its budget, and past it one in
// every 2^k, evenly spread, within the budget, saying so.
func TestSampleBudget(t *testing.T) {
	doc := func(i int) []byte { return fmt.Appendf(nil, `{"id":"%05d","pad":%q}`, i, strings.Repeat("x", 1000)) }
	size := int64(len(doc(0)))
	f := func(n int, budget int64, stride int) {
		t.Helper()
		s := NewSample(budget)
		for i := range n {
			if err := s.Add(doc(i)); err != nil {
				t.Fatal(err)
			}
		}
		docs := s.Documents()
		if s.Offered() != n || len(docs) != (n+stride-1)/stride {
			t.Fatalf("%d documents, budget %d: kept %d of %d, want one in %d", n, budget, len(docs), s.Offered(), stride)
		}
		var bytes int64
		for i, d := range docs {
			if want := fmt.Sprintf(`"id":"%05d"`, i*stride); !strings.Contains(string(d.Raw), want) {
				t.Fatalf("%d documents, budget %d: document %d is %.20s, want %s", n, budget, i, d.Raw, want)
			}
			bytes += int64(d.size())
		}
		if budget > 0 && bytes > budget && len(docs) > 1 {
			t.Fatalf("%d documents, budget %d: kept %d bytes", n, budget, bytes)
		}
		capped := s.Capped()
		if (stride > 1) != (capped != "") || stride > 1 && !strings.Contains(capped, fmt.Sprintf("budget of %d bytes: the analysis holds one in every %d", budget, stride)) {
			t.Fatalf("%d documents, budget %d: Capped() = %q", n, budget, capped)
		}
	}
	f(100, 0, 1)
	f(100, 100*size, 1)
	f(101, 100*size, 2)
	f(1000, 100*size, 16) // 1000/16 = 63 documents; 1000/8 = 125 would not fit
	f(3, size/2, 4)       // one document is always kept
}
