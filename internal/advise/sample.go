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
// object per line; blank lines are skipped). The format is chosen by the
// first non-blank byte: '[' means an array. Errors are *SampleError (with
// the line, column and byte offset of the problem) or ErrEmptySample.
// progress, if not nil, is called every 100,000 documents.
func ReadDocuments(data []byte, progress func(docs int, bytes int64)) ([]Document, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	start := 0
	for start < len(data) && isSpace(data[start]) {
		start++
	}
	if start == len(data) {
		return nil, ErrEmptySample
	}
	var docs []Document
	var err error
	if data[start] == '[' {
		docs, err = readArray(data, progress)
	} else {
		docs, err = readLines(data, progress)
	}
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, ErrEmptySample
	}
	return docs, nil
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

func readArray(data []byte, progress func(int, int64)) ([]Document, error) {
	if !json.Valid(data) {
		var v any
		return nil, syntaxError(data, 0, int64(len(data)), json.Unmarshal(data, &v))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '['
		return nil, syntaxError(data, 0, int64(len(data)), err)
	}
	var docs []Document
	var read int64
	for dec.More() {
		at := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(data, at, int64(len(data))-at, err)
		}
		for at < int64(len(data)) && (isSpace(data[at]) || data[at] == ',') {
			at++
		}
		if len(raw) == 0 || raw[0] != '{' {
			return nil, errorAt(data, at, fmt.Sprintf("element %d of the array is not a JSON object", len(docs)+1))
		}
		d, err := NewDocument(raw)
		if err != nil {
			return nil, errorAt(data, at, err.Error())
		}
		docs = append(docs, d)
		read += int64(len(raw))
		if progress != nil && len(docs)%100000 == 0 {
			progress(len(docs), read)
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return nil, syntaxError(data, dec.InputOffset(), int64(len(data))-dec.InputOffset(), err)
	}
	return docs, nil
}

func readLines(data []byte, progress func(int, int64)) ([]Document, error) {
	var docs []Document
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
				return nil, errorAt(data, int64(off+first), "expected a JSON object (the sample is read as NDJSON, one document per line, because it does not start with '[')")
			}
			if !json.Valid(line) {
				var v any
				return nil, syntaxError(data, int64(off), int64(len(line)), json.Unmarshal(line, &v))
			}
			d, err := NewDocument(line)
			if err != nil {
				return nil, errorAt(data, int64(off+first), err.Error())
			}
			docs = append(docs, d)
			read += int64(len(line))
			if progress != nil && len(docs)%100000 == 0 {
				progress(len(docs), read)
			}
		}
		off = end + 1
	}
	return docs, nil
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
