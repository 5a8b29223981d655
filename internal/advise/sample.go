package advise

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/throughput"
)

// Document is one sample document. Its position in the slice given to
// Analyze is its insertion order.
type Document struct {
	Raw   []byte         // the document as compact JSON
	Value map[string]any // the document decoded (numbers as float64)
	Ts    float64        // the _ts property (seconds since the epoch), if HasTs
	HasTs bool
}

// NewDocument decodes one JSON object into a Document.
func NewDocument(raw []byte) (Document, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return Document{}, err
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return Document{}, err
	}
	if m == nil {
		return Document{}, errors.New("a document must be a JSON object")
	}
	d := Document{Raw: buf.Bytes(), Value: m}
	if ts, ok := m["_ts"].(float64); ok {
		d.Ts, d.HasTs = ts, true
	}
	return d, nil
}

// size is the document's size in bytes, as stored.
func (d Document) size() int { return len(d.Raw) }

// writeCharge is the request charge of creating the document: the engine's
// cost model for its size and number of index terms.
func (d Document) writeCharge() float64 {
	return throughput.WriteCharge(len(d.Raw), jsondoc.Terms(d.Raw))
}

// DefaultSampleBytes is the default budget of the documents an analysis
// holds, counted as their JSON text; decoded, they take about three times
// as much memory.
const DefaultSampleBytes = 64 << 20

// Sample collects the documents of an analysis, in insertion order,
// within a byte budget: once the documents kept pass it, every other one
// is dropped and from then on one document in two is kept (one in four
// after a second halving, and so on). The documents kept are thus one in
// every Stride of those offered, spread evenly over them whatever their
// number, which need not be known in advance. The first document is
// always kept, even alone over the budget. It is not safe for concurrent
// use.
type Sample struct {
	max     int64
	stride  int
	offered int
	bytes   int64 // of the documents kept
	read    int64 // of the documents offered
	docs    []Document
	at      []int // the offer index of each document kept
}

// NewSample returns an empty sample that keeps at most maxBytes of
// documents (their JSON text); maxBytes <= 0: no bound.
func NewSample(maxBytes int64) *Sample { return &Sample{max: maxBytes, stride: 1} }

// Add offers the next document, one JSON object: it is decoded and kept
// if its index falls on the stride. An error is the document's
// (NewDocument).
func (s *Sample) Add(raw []byte) error {
	i := s.offered
	s.offered++
	s.read += int64(len(raw))
	if i%s.stride != 0 {
		return nil
	}
	d, err := NewDocument(raw)
	if err != nil {
		return err
	}
	s.docs = append(s.docs, d)
	s.at = append(s.at, i)
	s.bytes += int64(d.size())
	for s.max > 0 && s.bytes > s.max && len(s.docs) > 1 {
		s.halve()
	}
	return nil
}

// halve doubles the stride, dropping the documents off it.
func (s *Sample) halve() {
	s.stride *= 2
	n := 0
	s.bytes = 0
	for i, d := range s.docs {
		if s.at[i]%s.stride == 0 {
			s.docs[n], s.at[n] = d, s.at[i]
			s.bytes += int64(d.size())
			n++
		}
	}
	clear(s.docs[n:])
	s.docs, s.at = s.docs[:n], s.at[:n]
}

// Documents returns the documents kept, in insertion order.
func (s *Sample) Documents() []Document { return s.docs }

// Offered returns how many documents were offered.
func (s *Sample) Offered() int { return s.offered }

// Capped reports, for the report's warnings, that the sample kept only
// part of the documents offered; "" when it kept them all.
func (s *Sample) Capped() string {
	if s.stride == 1 {
		return ""
	}
	return fmt.Sprintf("the documents (%d, %d bytes) pass the sample's budget of %d bytes: the analysis holds one in every %d of them (%d documents, %d bytes), spread evenly over them; its counts are of those",
		s.offered, s.read, s.max, s.stride, len(s.docs), s.bytes)
}

// SampleError is a problem in the sample's text, with its position.
type SampleError struct {
	Line, Column int   // 1-based; Column counts bytes
	Offset       int64 // 0-based byte offset
	Msg          string
}

func (e *SampleError) Error() string {
	return fmt.Sprintf("line %d, column %d (byte offset %d): %s", e.Line, e.Column, e.Offset, e.Msg)
}

// ErrEmptySample is returned by ReadDocuments for input without documents.
var ErrEmptySample = errors.New("the sample holds no documents")

// ReadDocuments parses a sample: a JSON array of objects, or NDJSON (one
// object per line; blank lines are skipped), and offers its documents to
// into (every one is checked, kept or not). The format is chosen by the
// first non-blank byte: '[' means an array. Errors are *SampleError (with
// the line, column and byte offset of the problem) or ErrEmptySample.
// progress, if not nil, is called every 100,000 documents.
func ReadDocuments(data []byte, into *Sample, progress func(docs int, bytes int64)) error {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	start := 0
	for start < len(data) && isSpace(data[start]) {
		start++
	}
	if start == len(data) {
		return ErrEmptySample
	}
	var err error
	if data[start] == '[' {
		err = readArray(data, into, progress)
	} else {
		err = readLines(data, into, progress)
	}
	if err != nil {
		return err
	}
	if into.Offered() == 0 {
		return ErrEmptySample
	}
	return nil
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\r' || b == '\n' }

// errorAt builds a SampleError for the byte at offset off of data.
func errorAt(data []byte, off int64, msg string) *SampleError {
	off = min(max(off, 0), int64(len(data)))
	line := bytes.Count(data[:off], []byte("\n")) + 1
	lineStart := bytes.LastIndexByte(data[:off], '\n') + 1
	col := utf8.RuneCount(data[lineStart:off]) + 1
	return &SampleError{Line: line, Column: col, Offset: off, Msg: msg}
}

// syntaxError positions a JSON decoding error of the n bytes of text at
// data[base:].
func syntaxError(data []byte, base, n int64, err error) *SampleError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset - 1 // the offending byte
		if strings.HasPrefix(se.Error(), "unexpected end") {
			off = min(se.Offset, n)
		}
		return errorAt(data, base+off, "invalid JSON: "+se.Error())
	}
	return errorAt(data, base, "invalid JSON: "+err.Error())
}

func readArray(data []byte, into *Sample, progress func(int, int64)) error {
	if !json.Valid(data) {
		var v any
		return syntaxError(data, 0, int64(len(data)), json.Unmarshal(data, &v))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '['
		return syntaxError(data, 0, int64(len(data)), err)
	}
	var read int64
	for dec.More() {
		at := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntaxError(data, at, int64(len(data))-at, err)
		}
		for at < int64(len(data)) && (isSpace(data[at]) || data[at] == ',') {
			at++
		}
		if len(raw) == 0 || raw[0] != '{' {
			return errorAt(data, at, fmt.Sprintf("element %d of the array is not a JSON object", into.Offered()+1))
		}
		if err := into.Add(raw); err != nil {
			return errorAt(data, at, err.Error())
		}
		read += int64(len(raw))
		if progress != nil && into.Offered()%100000 == 0 {
			progress(into.Offered(), read)
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return syntaxError(data, dec.InputOffset(), int64(len(data))-dec.InputOffset(), err)
	}
	return nil
}

func readLines(data []byte, into *Sample, progress func(int, int64)) error {
	var read int64
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += off
		}
		line := data[off:end]
		first := 0
		for first < len(line) && isSpace(line[first]) {
			first++
		}
		if first < len(line) {
			if line[first] != '{' {
				return errorAt(data, int64(off+first), "expected a JSON object (the sample is read as NDJSON, one document per line, because it does not start with '[')")
			}
			if !json.Valid(line) {
				var v any
				return syntaxError(data, int64(off), int64(len(line)), json.Unmarshal(line, &v))
			}
			if err := into.Add(line); err != nil {
				return errorAt(data, int64(off+first), err.Error())
			}
			read += int64(len(line))
			if progress != nil && into.Offered()%100000 == 0 {
				progress(into.Offered(), read)
			}
		}
		off = end + 1
	}
	return nil
}

// SortByTimestamp orders documents by _ts, keeping the given order among
// equal timestamps (and putting documents without _ts first, in order). A
// container's read feed is in key order, not insertion order; _ts is the
// closest record of insertion order it keeps.
func SortByTimestamp(docs []Document) {
	slices.SortStableFunc(docs, func(a, b Document) int {
		switch {
		case !a.HasTs && !b.HasTs:
			return 0
		case !a.HasTs:
			return -1
		case !b.HasTs:
			return 1
		case a.Ts < b.Ts:
			return -1
		case a.Ts > b.Ts:
			return 1
		}
		return 0
	})
}

// lookup returns the value at a partition key path such as /a/b in doc, and
// whether it is there.
func lookup(doc map[string]any, segs []string) (any, bool) {
	var cur any = doc
	for _, s := range segs {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[s]; !ok {
			return nil, false
		}
	}
	return cur, true
}
