package fulltext

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// ErrCorrupt is the cause of every error decoding an index key or value.
var ErrCorrupt = errors.New("corrupt full-text index record")

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// Posting is one term of one document's text: where it occurs. Its term
// frequency is len(Positions).
type Posting struct {
	Term      string
	Positions []uint32 // strictly increasing
}

// DocTerms is what one text at one full-text path adds to the index: its
// length in terms (stop words excluded) and its postings, sorted by term.
type DocTerms struct {
	Length   uint32
	Postings []Posting
}

// Index analyses text into the terms the inverted index stores for it.
func (a *Analyzer) Index(text string) DocTerms {
	toks := a.Analyze(text)
	by := make(map[string][]uint32, len(toks))
	for _, t := range toks {
		by[t.Term] = append(by[t.Term], t.Pos)
	}
	dt := DocTerms{Length: uint32(len(toks)), Postings: make([]Posting, 0, len(by))}
	for term, pos := range by {
		dt.Postings = append(dt.Postings, Posting{Term: term, Positions: pos})
	}
	sort.Slice(dt.Postings, func(i, j int) bool { return dt.Postings[i].Term < dt.Postings[j].Term })
	return dt
}

// Record kinds: the first byte of every key this package makes. The engine
// puts its own prefix (container, index tag, and for statistics the
// physical partition) before them.
const (
	KindPosting   byte = 0x01 // path term docKey → tf and positions
	KindLength    byte = 0x02 // path docKey → length in terms
	KindPathStats byte = 0x03 // path stat → count (per partition)
	KindTermStats byte = 0x04 // path term → document frequency (per partition)
	KindDocStats  byte = 0x05 // → documents in the partition
)

// Per-path statistics (KindPathStats keys end with one of these).
const (
	statPathDocs   byte = 0x01 // documents with a text at the path
	statPathLength byte = 0x02 // sum of their lengths in terms
)

// appendEscaped writes s with 0x00 escaped as 0x00 0xFF, then 0x00 0x01:
// byte order of the result is byte order of s, and no encoding is a
// prefix of another.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			dst = append(dst, 0x00, 0xFF)
		} else {
			dst = append(dst, s[i])
		}
	}
	return append(dst, 0x00, 0x01)
}

// readEscaped reads one appendEscaped string from b.
func readEscaped(b []byte) (string, []byte, error) {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if i+1 >= len(b) {
			return "", nil, corrupt("unterminated string")
		}
		switch b[i+1] {
		case 0x01:
			out = append(out, b[:i]...)
			return string(out), b[i+2:], nil
		case 0xFF:
			out = append(out, b[:i+1]...)
			b = b[i+2:]
			i = -1
		default:
			return "", nil, corrupt("bad escape 0x00 0x%02x", b[i+1])
		}
	}
	return "", nil, corrupt("unterminated string")
}

// AppendPath encodes a full-text path: for each segment 0x01 and the
// escaped name, then 0x00. All keys of one path share this prefix.
func AppendPath(dst []byte, path []string) []byte {
	for _, s := range path {
		dst = append(dst, 0x01)
		dst = appendEscaped(dst, s)
	}
	return append(dst, 0x00)
}

func readPath(b []byte) ([]string, []byte, error) {
	var segs []string
	for {
		if len(b) == 0 {
			return nil, nil, corrupt("unterminated path")
		}
		switch b[0] {
		case 0x00:
			if len(segs) == 0 {
				return nil, nil, corrupt("empty path")
			}
			return segs, b[1:], nil
		case 0x01:
			if len(segs) >= maxPathSegments {
				return nil, nil, corrupt("path deeper than %d segments", maxPathSegments)
			}
			s, rest, err := readEscaped(b[1:])
			if err != nil {
				return nil, nil, err
			}
			segs = append(segs, s)
			b = rest
		default:
			return nil, nil, corrupt("bad path byte 0x%02x", b[0])
		}
	}
}

const maxPathSegments = 64

// PostingKey is the key of one document's posting of a term:
//
//	0x01 | path | term escaped, 0x00 0x01 | docKey
//
// Keys sort by path, then term, then document key, so the postings of a
// term are one key span (PostingPrefix) ordered like the documents: with
// document keys that start with the effective partition key, each physical
// partition reads its own contiguous slice, and a split moves no posting.
func PostingKey(dst []byte, path []string, term string, docKey []byte) []byte {
	dst = PostingPrefix(dst, path, term)
	return append(dst, docKey...)
}

// PostingPrefix is the common prefix of the posting keys of a term.
func PostingPrefix(dst []byte, path []string, term string) []byte {
	dst = append(dst, KindPosting)
	dst = AppendPath(dst, path)
	return appendEscaped(dst, term)
}

// DecodePostingKey splits a posting key (without the engine's prefix).
func DecodePostingKey(k []byte) (path []string, term string, docKey []byte, err error) {
	if len(k) == 0 || k[0] != KindPosting {
		return nil, "", nil, corrupt("not a posting key")
	}
	path, rest, err := readPath(k[1:])
	if err != nil {
		return nil, "", nil, err
	}
	term, rest, err = readEscaped(rest)
	if err != nil {
		return nil, "", nil, err
	}
	if len(term) == 0 || len(term) > MaxTermBytes {
		return nil, "", nil, corrupt("term of %d bytes", len(term))
	}
	if len(rest) == 0 {
		return nil, "", nil, corrupt("posting key without a document key")
	}
	return path, term, rest, nil
}

// EncodePosting is a posting's value: the term frequency, then each
// position as the difference from the previous one (the first from 0), all
// unsigned varints.
func EncodePosting(dst []byte, positions []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(positions)))
	var prev uint32
	for i, p := range positions {
		d := p - prev
		if i == 0 {
			d = p
		}
		dst = binary.AppendUvarint(dst, uint64(d))
		prev = p
	}
	return dst
}

// DecodePosting reads a posting value. It checks that the frequency is
// between 1 and MaxTokens, that positions strictly increase below
// MaxTokens, and that nothing follows; it never allocates more than the
// value's length justifies.
func DecodePosting(v []byte) ([]uint32, error) {
	n, k := uvarint(v)
	if k <= 0 {
		return nil, corrupt("bad term frequency")
	}
	v = v[k:]
	if n == 0 || n > MaxTokens || n > uint64(len(v)) {
		return nil, corrupt("term frequency %d with %d bytes of positions", n, len(v))
	}
	out := make([]uint32, 0, n)
	var pos uint64
	for i := uint64(0); i < n; i++ {
		d, k := uvarint(v)
		if k <= 0 {
			return nil, corrupt("bad position %d", i)
		}
		v = v[k:]
		if i > 0 && d == 0 {
			return nil, corrupt("positions not increasing")
		}
		pos += d
		if pos >= MaxTokens {
			return nil, corrupt("position %d out of range", pos)
		}
		out = append(out, uint32(pos))
	}
	if len(v) != 0 {
		return nil, corrupt("%d bytes after positions", len(v))
	}
	return out, nil
}

// LengthKey is the key of a document's length at a path:
//
//	0x02 | path | docKey
func LengthKey(dst []byte, path []string, docKey []byte) []byte {
	dst = append(dst, KindLength)
	dst = AppendPath(dst, path)
	return append(dst, docKey...)
}

// DecodeLengthKey splits a length key.
func DecodeLengthKey(k []byte) (path []string, docKey []byte, err error) {
	if len(k) == 0 || k[0] != KindLength {
		return nil, nil, corrupt("not a length key")
	}
	path, rest, err := readPath(k[1:])
	if err != nil {
		return nil, nil, err
	}
	if len(rest) == 0 {
		return nil, nil, corrupt("length key without a document key")
	}
	return path, rest, nil
}

// PathDocsKey, PathLengthKey, TermStatsKey and DocStatsKey are the keys of
// a partition's statistics; the engine prefixes them with the partition.
// Their values are counts (EncodeCount) that merge by addition (AddCount).
//
//	0x03 | path | 0x01          documents with a text at the path
//	0x03 | path | 0x02          total length of those texts, in terms
//	0x04 | path | term escaped  documents whose text has the term
//	0x05                        documents in the partition
func PathDocsKey(dst []byte, path []string) []byte {
	return append(AppendPath(append(dst, KindPathStats), path), statPathDocs)
}

// PathLengthKey: see PathDocsKey.
func PathLengthKey(dst []byte, path []string) []byte {
	return append(AppendPath(append(dst, KindPathStats), path), statPathLength)
}

// TermStatsKey: see PathDocsKey. The term statistics of a path are also
// its dictionary (TermStatsPrefix), which fuzzy search scans.
func TermStatsKey(dst []byte, path []string, term string) []byte {
	return appendEscaped(TermStatsPrefix(dst, path), term)
}

// TermStatsPrefix is the prefix of a path's term statistics.
func TermStatsPrefix(dst []byte, path []string) []byte {
	return AppendPath(append(dst, KindTermStats), path)
}

// DocStatsKey: see PathDocsKey.
func DocStatsKey(dst []byte) []byte { return append(dst, KindDocStats) }

// DecodeTermStatsKey returns the path and term of a term statistics key.
func DecodeTermStatsKey(k []byte) (path []string, term string, err error) {
	if len(k) == 0 || k[0] != KindTermStats {
		return nil, "", corrupt("not a term statistics key")
	}
	path, rest, err := readPath(k[1:])
	if err != nil {
		return nil, "", err
	}
	term, rest, err = readEscaped(rest)
	if err != nil {
		return nil, "", err
	}
	if len(rest) != 0 || term == "" {
		return nil, "", corrupt("bad term statistics key")
	}
	return path, term, nil
}

// EncodeCount is the value of a statistics record: an unsigned varint.
func EncodeCount(dst []byte, n uint64) []byte { return binary.AppendUvarint(dst, n) }

// DecodeCount reads a statistics value; an absent record (nil) is 0.
func DecodeCount(v []byte) (uint64, error) {
	if len(v) == 0 {
		return 0, nil
	}
	n, k := uvarint(v)
	if k <= 0 || k != len(v) {
		return 0, corrupt("bad count")
	}
	return n, nil
}

// AddCount applies a delta to a count, refusing to go below zero or to
// overflow (either means the statistics and the postings disagree).
func AddCount(n uint64, delta int64) (uint64, error) {
	if delta < 0 {
		d := uint64(-(delta + 1)) + 1
		if d > n {
			return 0, corrupt("count %d minus %d is negative", n, d)
		}
		return n - d, nil
	}
	if uint64(delta) > math.MaxUint64-n {
		return 0, corrupt("count overflows")
	}
	return n + uint64(delta), nil
}

// KV is one record to write.
type KV struct{ Key, Value []byte }

// StatDelta is a change to one statistics record (a key made by the
// Path/Term/DocStats key functions, without the engine's prefix).
type StatDelta struct {
	Key   []byte
	Delta int64
}

// Change is what a write of one document does to one full-text path: the
// posting and length records to put and to delete, and the statistics to
// adjust, all in the same batch as the item.
type Change struct {
	Puts    []KV
	Deletes [][]byte
	Stats   []StatDelta
}

// Update computes the records for a document whose text at path goes from
// old to new; nil means the document has no text there (created, deleted,
// or not a string). Postings of terms that disappear are deleted; the
// others are rewritten. The partition's document count (DocStatsKey) is
// not included: it changes by one on every create and delete, whatever the
// text, and the engine adds it once per document.
func Update(path []string, docKey []byte, old, new *DocTerms) Change {
	var c Change
	inNew := map[string]bool{}
	if new != nil {
		for _, p := range new.Postings {
			inNew[p.Term] = true
		}
	}
	inOld := map[string]bool{}
	if old != nil {
		for _, p := range old.Postings {
			inOld[p.Term] = true
			if !inNew[p.Term] {
				c.Deletes = append(c.Deletes, PostingKey(nil, path, p.Term, docKey))
				c.Stats = append(c.Stats, StatDelta{TermStatsKey(nil, path, p.Term), -1})
			}
		}
		if new == nil {
			c.Deletes = append(c.Deletes, LengthKey(nil, path, docKey))
			c.Stats = append(c.Stats,
				StatDelta{PathDocsKey(nil, path), -1},
				StatDelta{PathLengthKey(nil, path), -int64(old.Length)})
		}
	}
	if new != nil {
		for _, p := range new.Postings {
			c.Puts = append(c.Puts, KV{PostingKey(nil, path, p.Term, docKey), EncodePosting(nil, p.Positions)})
			if !inOld[p.Term] {
				c.Stats = append(c.Stats, StatDelta{TermStatsKey(nil, path, p.Term), 1})
			}
		}
		c.Puts = append(c.Puts, KV{LengthKey(nil, path, docKey), EncodeCount(nil, uint64(new.Length))})
		var oldLen int64
		if old == nil {
			c.Stats = append(c.Stats, StatDelta{PathDocsKey(nil, path), 1})
		} else {
			oldLen = int64(old.Length)
		}
		if d := int64(new.Length) - oldLen; d != 0 || old == nil {
			c.Stats = append(c.Stats, StatDelta{PathLengthKey(nil, path), d})
		}
	}
	return c
}

// uvarint is binary.Uvarint that also refuses non-minimal encodings (a
// last byte of 0 after others), so that every value has one encoding.
func uvarint(b []byte) (uint64, int) {
	n, k := binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, 0
	}
	return n, k
}
