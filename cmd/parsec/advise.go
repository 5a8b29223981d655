package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	adv "github.com/parsecdb/parsec/internal/advise"
	"github.com/parsecdb/parsec/internal/api/cosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/synthkey"
)

const adviseUsage = `Usage:
  parsec advise --sample FILE [flags]              evaluate keys on sample documents
  parsec advise --live DB/CONTAINER [flags]        evaluate keys on a container's documents

Ranks partition-key candidates: for each, computed with the server's own hashing
and partition layout, how current writes, storage and request units spread over
the physical partitions, whether the key is monotonic, the 429 risk at the given
throughput, when a logical partition reaches 20 GB, and how a workload routes.

Candidates are key expressions: /date, [/tenant, /user] (hierarchical),
concat(/deviceId, "-", /date), concat(/date, ".", random(1, 400)),
concat(/date, ".", hash(/vin, 400)). Without --candidate, candidates are proposed
from the documents' properties (and, live, the container's current key is one).

Exit status: 0 on success, 2 for a usage error, 1 when the input cannot be read
or analyzed.

Flags:
`

// candidateList is the repeatable --candidate flag.
type candidateList []string

func (c *candidateList) String() string { return strings.Join(*c, "; ") }
func (c *candidateList) Set(s string) error {
	*c = append(*c, s)
	return nil
}

// advise runs `parsec advise`.
func advise(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parsec advise", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf clientFlags
	cf.register(fs)
	var cands candidateList
	sample := fs.String("sample", "", "sample documents: a JSON array or NDJSON file, - for standard input")
	fs.Var(&cands, "candidate", "a candidate key expression (repeatable); none: propose candidates from the data")
	partitions := fs.Int("partitions", 0, "physical partitions N (default: the projected size of the data, live: the container's ranges)")
	rus := fs.Float64("throughput", 0, "provisioned throughput in RU/s; N = ceil(RU/10000)")
	workload := fs.String("workload", "", "workload file: NDJSON, one operation class per line (see internal/advise/doc.go)")
	growth := fs.String("growth", "", "growth rate: documents/day (50000/day) or bytes/day (2GB/day); default: from the documents' _ts")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	htmlFile := fs.String("html", "", "also write a self-contained HTML report to this file")
	live := fs.String("live", "", "evaluate the documents of this DATABASE/CONTAINER on the server at --endpoint")
	seed := fs.Uint64("seed", 1, "seed of random(...) suffixes")
	pageSize := fs.Int("page-size", 1000, "live: documents per read-feed page")
	sampleBytes := int64(adv.DefaultSampleBytes)
	fs.Var(byteSize{&sampleBytes}, "max-sample-bytes", "documents the analysis holds, as JSON text: past it one document in 2 (4, 8...) is kept, evenly spread, and the report says so; bytes, or with a unit (default 64MiB)")
	fs.Usage = func() {
		fmt.Fprint(stderr, adviseUsage)
		fs.PrintDefaults()
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "parsec advise: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run 'parsec advise --help' for the flags.")
		return 2
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) > 0 {
		return usageErr("unexpected argument %q (the sample is given with --sample FILE)", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["live"] && set["sample"]:
		return usageErr("give either --sample FILE or --live DATABASE/CONTAINER, not both")
	case !set["live"] && !set["sample"]:
		return usageErr("give --sample FILE (documents to evaluate) or --live DATABASE/CONTAINER")
	case set["sample"] && *sample == "":
		return usageErr("--sample needs a file name, or - for standard input")
	case set["partitions"] && set["throughput"]:
		return usageErr("give --partitions or --throughput, not both (--throughput T means ceil(T/10000) partitions)")
	case set["partitions"] && *partitions < 1:
		return usageErr("--partitions must be at least 1, got %d", *partitions)
	case set["throughput"] && (*rus <= 0 || math.IsInf(*rus, 0) || math.IsNaN(*rus)):
		return usageErr("--throughput must be a positive number of RU/s, got %v", *rus)
	case *pageSize < 1:
		return usageErr("--page-size must be at least 1")
	}
	var db, coll string
	if set["live"] {
		var ok bool
		db, coll, ok = strings.Cut(*live, "/")
		if !ok || db == "" || coll == "" || strings.Contains(coll, "/") {
			return usageErr("--live wants DATABASE/CONTAINER, got %q", *live)
		}
	}
	opts := adv.Options{Partitions: *partitions, Throughput: *rus, Seed: *seed}
	for _, c := range cands {
		if _, err := synthkey.Parse(c); err != nil {
			fmt.Fprintf(stderr, "parsec advise: --candidate %q: %v\n", c, err)
			var se *synthkey.SyntaxError
			if errors.As(err, &se) {
				fmt.Fprintf(stderr, "    %s\n    %s^\n", c, strings.Repeat(" ", len([]rune(c[:min(se.Offset, len(c))]))))
			}
			return 2
		}
		opts.Candidates = append(opts.Candidates, adv.Candidate{Expr: c})
	}
	if *growth != "" {
		g, err := adv.ParseGrowth(*growth)
		if err != nil {
			return usageErr("--growth: %v", err)
		}
		opts.Growth = g
	}
	progress := func(msg string) { fmt.Fprintf(stderr, "parsec advise: %s\n", msg) }
	opts.Progress = progress

	if *workload != "" {
		data, err := os.ReadFile(*workload)
		if err != nil {
			fmt.Fprintf(stderr, "parsec advise: cannot read the workload: %v\n", err)
			return 1
		}
		ops, err := adv.ParseWorkload(data)
		if err != nil {
			fmt.Fprintf(stderr, "parsec advise: workload %s: %v\n", *workload, err)
			return 1
		}
		opts.Workload = ops
	}

	var docs []adv.Document
	if set["live"] {
		docs, err = loadLive(&cf, db, coll, *pageSize, sampleBytes, &opts, set, progress)
		if err != nil {
			fmt.Fprintf(stderr, "parsec advise: %v\n", err)
			return 1
		}
	} else {
		opts.SourceName = *sample
		if *sample == "-" {
			opts.SourceName = "standard input"
		}
		docs, err = loadSample(*sample, sampleBytes, &opts, progress)
		if err != nil {
			fmt.Fprintf(stderr, "parsec advise: %v\n", err)
			return 1
		}
	}

	rep, err := adv.Analyze(docs, opts)
	if err != nil {
		fmt.Fprintf(stderr, "parsec advise: %v\n", err)
		return 1
	}
	if *htmlFile != "" {
		f, err := os.Create(*htmlFile)
		if err == nil {
			err = adv.WriteHTML(f, rep)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "parsec advise: cannot write the HTML report: %v\n", err)
			return 1
		}
		progress("wrote the HTML report to " + *htmlFile)
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "parsec advise: %v\n", err)
			return 1
		}
		return 0
	}
	if err := adv.WriteTable(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "parsec advise: %v\n", err)
		return 1
	}
	return 0
}

// loadSample reads the sample documents from a file or standard input,
// keeping at most maxBytes of them (see adv.Sample).
func loadSample(name string, maxBytes int64, opts *adv.Options, progress func(string)) ([]adv.Document, error) {
	var data []byte
	var err error
	label := name
	if name == "-" {
		label = "standard input"
		data, err = io.ReadAll(os.Stdin)
	} else {
		if fi, serr := os.Stat(name); serr == nil && fi.Size() > 64<<20 {
			progress(fmt.Sprintf("reading %s (%d MB)", name, fi.Size()>>20))
		}
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read the sample: %v", err)
	}
	sample := adv.NewSample(maxBytes)
	err = adv.ReadDocuments(data, sample, func(n int, b int64) {
		progress(fmt.Sprintf("parsed %s documents (%s MB)", commas(int64(n)), commas(b>>20)))
	})
	if err != nil {
		return nil, fmt.Errorf("sample %s: %w", label, err)
	}
	progress(fmt.Sprintf("read %s (%s bytes) from %s", documents(sample.Offered()), commas(int64(len(data))), label))
	return sampled(sample, opts, progress), nil
}

// liveContainer is what advise needs of a container resource.
type liveContainer struct {
	PartitionKey *epk.Definition `json:"partitionKey"`
}

type liveRanges struct {
	Ranges []struct {
		ID  string `json:"id"`
		Min string `json:"minInclusive"`
		Max string `json:"maxExclusive"`
	} `json:"PartitionKeyRanges"`
}

// loadLive reads a container's definition, partition map, telemetry and
// documents, and fills in the options that come from the container.
func loadLive(cf *clientFlags, db, coll string, pageSize int, maxBytes int64, opts *adv.Options, set map[string]bool, progress func(string)) ([]adv.Document, error) {
	base := "/dbs/" + db + "/colls/" + coll
	given := len(opts.Candidates) > 0
	var c liveContainer
	if err := cf.get(base, &c); err != nil {
		return nil, fmt.Errorf("reading container %s/%s: %v", db, coll, err)
	}
	var pr liveRanges
	if err := cf.get(base+"/pkranges", &pr); err != nil {
		return nil, fmt.Errorf("reading the partition key ranges of %s/%s: %v", db, coll, err)
	}
	live := adv.LiveContainer{Name: db + "/" + coll, Key: c.PartitionKey}
	for _, r := range pr.Ranges {
		live.Ranges = append(live.Ranges, adv.PartitionRange{ID: r.ID, Min: r.Min, Max: r.Max})
	}
	var t cosmos.ContainerTelemetry
	if err := cf.get(base+"/partitions", &t); err != nil {
		progress(fmt.Sprintf("no partition telemetry (%v); going on without recorded RU and hot keys", err))
	} else {
		live.Telemetry = cosmos.AdviseTelemetry(t)
	}
	if err := adv.PrepareLive(opts, live, set["partitions"] || set["throughput"], progress); err != nil {
		return nil, err
	}

	sample := adv.NewSample(maxBytes)
	if err := readFeed(cf, base, pageSize, sample, progress); err != nil {
		return nil, err
	}
	docs := sampled(sample, opts, progress)
	if len(docs) == 0 {
		return nil, fmt.Errorf("container %s/%s holds no documents", db, coll)
	}
	adv.SortByTimestamp(docs)
	if !given {
		// No candidates given: propose some from the data, beside the
		// current key.
		adv.ProposeLive(opts, docs)
	}
	return docs, nil
}

// sampled returns the documents sample kept, with its warning in opts when
// it kept only part of them.
func sampled(sample *adv.Sample, opts *adv.Options, progress func(string)) []adv.Document {
	if w := sample.Capped(); w != "" {
		opts.Warnings = append(opts.Warnings, w)
		progress(w)
	}
	return sample.Documents()
}

// readFeed pages through a container's read feed, all partitions, waiting
// out 429s, offering every document to into.
func readFeed(cf *clientFlags, base string, pageSize int, into *adv.Sample, progress func(string)) error {
	var bytes int64
	cont := ""
	last := time.Now()
	for {
		page, next, err := feedPage(cf, base+"/docs", cont, pageSize)
		if err != nil {
			return fmt.Errorf("reading the documents after %d: %v", into.Offered(), err)
		}
		for _, raw := range page {
			if err := into.Add(raw); err != nil {
				return fmt.Errorf("document %d of the read feed: %v", into.Offered(), err)
			}
			bytes += int64(len(raw))
		}
		if time.Since(last) > 2*time.Second {
			progress(fmt.Sprintf("read %s (%s MB)", documents(into.Offered()), commas(bytes>>20)))
			last = time.Now()
		}
		if next == "" {
			break
		}
		cont = next
	}
	progress(fmt.Sprintf("read %s (%s bytes) from the container", documents(into.Offered()), commas(bytes)))
	return nil
}

// feedPage fetches one page of a read feed: a signed GET with the page size
// and continuation headers. It retries 429s after the time the server asks.
func feedPage(cf *clientFlags, path, cont string, n int) ([]json.RawMessage, string, error) {
	key, err := auth.DecodeKey(cf.key)
	if err != nil {
		return nil, "", fmt.Errorf("--key is not a valid base64 key: %v", err)
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	escaped := make([]string, len(segs))
	for i, s := range segs {
		escaped[i] = url.PathEscape(s)
	}
	target := strings.TrimSuffix(cf.endpoint, "/") + "/" + strings.Join(escaped, "/")
	client := &http.Client{Timeout: 60 * time.Second}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequest(http.MethodGet, target, nil)
		if err != nil {
			return nil, "", fmt.Errorf("--endpoint %q is not a URL: %v", cf.endpoint, err)
		}
		date := time.Now().UTC().Format(http.TimeFormat)
		typ, link := auth.Resource(strings.Join(segs, "/"))
		req.Header.Set("x-ms-date", date)
		req.Header.Set("x-ms-version", "2020-11-05")
		req.Header.Set("Authorization", auth.Header(auth.Sign(key, http.MethodGet, typ, link, date)))
		req.Header.Set("x-ms-max-item-count", strconv.Itoa(n))
		req.Header.Set("x-ms-documentdb-query-enablecrosspartition", "true")
		if cont != "" {
			req.Header.Set("x-ms-continuation", cont)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, "", fmt.Errorf("cannot reach %s: %v", cf.endpoint, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, "", err
		}
		if resp.StatusCode == http.StatusTooManyRequests && attempt < 20 {
			ms, _ := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
			time.Sleep(time.Duration(max(ms, 10)) * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			var e struct{ Code, Message string }
			if json.Unmarshal(body, &e) == nil && e.Message != "" {
				return nil, "", fmt.Errorf("%s: %s", e.Code, e.Message)
			}
			return nil, "", fmt.Errorf("the server answered %s", resp.Status)
		}
		var feed struct {
			Documents []json.RawMessage `json:"Documents"`
		}
		if err := json.Unmarshal(body, &feed); err != nil {
			return nil, "", fmt.Errorf("the read feed is not JSON: %v", err)
		}
		return feed.Documents, resp.Header.Get("x-ms-continuation"), nil
	}
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && c != '-' && (len(s)-i)%3 == 0 && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// documents writes "1 document" or "n documents".
func documents(n int) string {
	if n == 1 {
		return "1 document"
	}
	return commas(int64(n)) + " documents"
}
