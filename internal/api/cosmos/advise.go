package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	adv "github.com/parsecdb/parsec/internal/advise"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/synthkey"
)

// POST /dbs/{db}/colls/{c}/advise runs the partition-key advisor on the
// container's documents, the analysis `parsec advise --live` runs from a
// client, and answers its report: JSON (as `parsec advise --json` prints
// it), or the HTML report when the request accepts text/html. The body is
// optional:
//
//	{"candidates": ["/date", "concat(/a, /b)"], "maxDocuments": 100000}
//
// The analysis holds the documents in memory, so it runs on containers of
// at most maxDocuments documents (default DefaultAdviseDocuments, at most
// MaxAdviseDocuments), one at a time per server, and holds at most
// advise.DefaultSampleBytes of them: past it the documents are sampled
// (advise.Sample) and the report's warnings say so.
const (
	DefaultAdviseDocuments = 100_000
	MaxAdviseDocuments     = 1_000_000
	maxAdviseCandidates    = 32
	advisePage             = 1000
)

type adviseRequest struct {
	Candidates   []string `json:"candidates"`
	MaxDocuments int      `json:"maxDocuments"`
}

func (s *Server) advise(req *request, op operation) error {
	c, err := s.openContainer(req, op.db, op.coll)
	if err != nil {
		return err
	}
	var in adviseRequest
	if body, err := readBody(req); err != nil {
		return err
	} else if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
		// A misspelt option must not be ignored silently.
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&adviseRequest{}); err != nil {
			return errBadRequest("the advise request body: %v (it takes \"candidates\" and \"maxDocuments\")", err)
		}
	}
	switch {
	case in.MaxDocuments == 0:
		in.MaxDocuments = DefaultAdviseDocuments
	case in.MaxDocuments < 1 || in.MaxDocuments > MaxAdviseDocuments:
		return errBadRequest("maxDocuments must be between 1 and %d, not %d", MaxAdviseDocuments, in.MaxDocuments)
	}
	if len(in.Candidates) > maxAdviseCandidates {
		return errBadRequest("at most %d candidates can be evaluated at once, not %d", maxAdviseCandidates, len(in.Candidates))
	}
	var opts adv.Options
	for _, expr := range in.Candidates {
		if _, err := synthkey.Parse(expr); err != nil {
			return errBadRequest("candidate %q: %v", expr, err)
		}
		opts.Candidates = append(opts.Candidates, adv.Candidate{Expr: expr})
	}
	if !s.advising.CompareAndSwap(false, true) {
		return &apiError{status: http.StatusTooManyRequests, code: "TooManyRequests",
			msg: "another partition-key analysis is running on this server; try again when it has finished"}
	}
	defer s.advising.Store(false)

	t, err := containerTelemetry(op.db, c)
	if err != nil {
		return err
	}
	total := int64(0)
	for _, p := range t.Partitions {
		total += p.Items
	}
	if total > int64(in.MaxDocuments) {
		return errBadRequest("container %s/%s holds %d documents, more than the %d the analysis may hold in memory (maxDocuments, at most %d); run `parsec advise --live %s/%s` from a machine with memory for them",
			op.db, op.coll, total, in.MaxDocuments, MaxAdviseDocuments, op.db, op.coll)
	}
	info := c.Info()
	key := info.PartitionKey
	live := adv.LiveContainer{Name: op.db + "/" + op.coll, Key: &key, Telemetry: AdviseTelemetry(t)}
	for _, p := range t.Partitions {
		live.Ranges = append(live.Ranges, adv.PartitionRange{ID: p.ID, Min: p.MinInclusive, Max: p.MaxExclusive})
	}
	if err := adv.PrepareLive(&opts, live, false, nil); err != nil {
		return errBadRequest("%v", err)
	}
	sample := adv.NewSample(adv.DefaultSampleBytes)
	if err := adviseDocuments(c, in.MaxDocuments, sample); err != nil {
		return err
	}
	if w := sample.Capped(); w != "" {
		opts.Warnings = append(opts.Warnings, w)
	}
	docs := sample.Documents()
	if len(docs) == 0 {
		return errBadRequest("container %s/%s holds no documents to analyze", op.db, op.coll)
	}
	adv.SortByTimestamp(docs)
	if len(in.Candidates) == 0 {
		adv.ProposeLive(&opts, docs)
	}
	rep, err := adv.Analyze(docs, opts)
	if err != nil {
		return errBadRequest("%v", err)
	}
	req.charge = 1
	if strings.Contains(req.r.Header.Get("Accept"), "text/html") {
		var b bytes.Buffer
		if err := adv.WriteHTML(&b, rep); err != nil {
			return err
		}
		req.w.Header().Set(hContentType, "text/html; charset=utf-8")
		s.writeJSON(req, http.StatusOK, b.Bytes())
		return nil
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	s.writeJSON(req, http.StatusOK, body)
	return nil
}

// AdviseTelemetry is a container's telemetry as the advisor takes it (a
// shared-throughput container reports no throughput of its own).
func AdviseTelemetry(t ContainerTelemetry) *adv.LiveTelemetry {
	lt := &adv.LiveTelemetry{Throughput: float64(max(t.Throughput, t.AutoscaleMax))}
	for _, p := range t.Partitions {
		o := adv.ObservedRange{ID: p.ID, Min: p.MinInclusive, Max: p.MaxExclusive, BudgetRU: p.BudgetRUs,
			ConsumedRU: p.ConsumedRUs, Throttled: p.Throttled, Bytes: p.Bytes, Items: p.Items}
		for _, k := range p.HotByRU {
			o.TopKeysByRU = append(o.TopKeysByRU, adv.KeyWeight{Key: k.Key, Weight: k.Weight})
		}
		lt.Observed = append(lt.Observed, o)
	}
	return lt
}

// adviseDocuments offers the container's documents, read through its read
// feed, to into, failing once more than limit have been read (the
// container grew since its item count was taken).
func adviseDocuments(c *engine.Container, limit int, into *adv.Sample) error {
	var after []byte
	for {
		f, err := c.ReadFeed("", after, advisePage)
		if err != nil {
			return err
		}
		for _, raw := range f.Docs {
			if err := into.Add(raw); err != nil {
				return fmt.Errorf("document %d of the container: %w", into.Offered(), err)
			}
		}
		if into.Offered() > limit {
			return errBadRequest("the container holds more than %d documents (maxDocuments)", limit)
		}
		if f.Next == nil {
			return nil
		}
		after = f.Next
	}
}
