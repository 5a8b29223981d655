package fulltext

import (
	"bytes"
	"errors"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestPostingRoundTrip(t *testing.T) {
	for _, pos := range [][]uint32{{0}, {5}, {0, 1, 2}, {3, 300, 70000, MaxTokens - 1}} {
		got, err := DecodePosting(EncodePosting(nil, pos))
		if err != nil || !reflect.DeepEqual(got, pos) {
			t.Errorf("%v: got %v, %v", pos, got, err)
		}
	}
	path := []string{"a", "b\x00c", ""}
	k := PostingKey([]byte{}, path, "té\x00rm", []byte("epk\x00id"))
	p, term, dk, err := DecodePostingKey(k)
	if err != nil || !reflect.DeepEqual(p, path) || term != "té\x00rm" || string(dk) != "epk\x00id" {
		t.Fatalf("%q %q %q %v", p, term, dk, err)
	}
	if !bytes.HasPrefix(k, PostingPrefix(nil, path, "té\x00rm")) {
		t.Fatal("prefix")
	}
	lp, ldk, err := DecodeLengthKey(LengthKey(nil, path, []byte("d")))
	if err != nil || !reflect.DeepEqual(lp, path) || string(ldk) != "d" {
		t.Fatal("length key", lp, ldk, err)
	}
	sp, st, err := DecodeTermStatsKey(TermStatsKey(nil, path, "w"))
	if err != nil || !reflect.DeepEqual(sp, path) || st != "w" {
		t.Fatal("term stats key", sp, st, err)
	}
}

// TestPostingKeyOrder checks that posting keys sort by path, term, then
// document key, the order in which the engine reads them.
func TestPostingKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	str := func(n int) string {
		b := make([]byte, rng.Intn(n)+1)
		for i := range b {
			b[i] = "\x00\x01ab\xff"[rng.Intn(5)]
		}
		return string(b)
	}
	type rec struct {
		path      []string
		term, doc string
		key       []byte
	}
	var recs []rec
	for i := 0; i < 2000; i++ {
		r := rec{path: []string{str(2)}, term: str(4), doc: str(4)}
		if rng.Intn(2) == 0 {
			r.path = append(r.path, str(2))
		}
		r.key = PostingKey(nil, r.path, r.term, []byte(r.doc))
		recs = append(recs, r)
	}
	sort.Slice(recs, func(i, j int) bool { return bytes.Compare(recs[i].key, recs[j].key) < 0 })
	less := func(a, b rec) int {
		for i := 0; i < len(a.path) && i < len(b.path); i++ {
			if c := strings.Compare(a.path[i], b.path[i]); c != 0 {
				return c
			}
		}
		if len(a.path) != len(b.path) {
			return len(a.path) - len(b.path)
		}
		if c := strings.Compare(a.term, b.term); c != 0 {
			return c
		}
		return strings.Compare(a.doc, b.doc)
	}
	for i := 1; i < len(recs); i++ {
		if less(recs[i-1], recs[i]) > 0 {
			t.Fatalf("%q sorts before %q", recs[i-1], recs[i])
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	bad := [][]byte{
		nil, {0x00}, // empty, tf 0
		{0x01},             // tf 1 without positions
		{0x01, 5, 1},       // a byte after the positions
		{0x02, 0x00, 0x00}, // repeated position
		{0x01, 0x80},       // truncated varint
		{0x01, 0x00, 0x00}, // trailing byte
		EncodePosting(nil, []uint32{MaxTokens}),
	}
	for _, v := range bad {
		if _, err := DecodePosting(v); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodePosting(%x) = %v", v, err)
		}
	}
	good := PostingKey(nil, []string{"a"}, "t", []byte("d"))
	badKeys := [][]byte{nil, {0x02}, good[:len(good)-1], {0x01, 0x00, 0x01, 't', 0x00, 0x01, 'd'}, {0x01, 0x01, 'a', 0x00, 0x07}}
	for _, k := range badKeys {
		if _, _, _, err := DecodePostingKey(k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodePostingKey(%x) = %v", k, err)
		}
	}
	if _, err := DecodeCount([]byte{0x80}); !errors.Is(err, ErrCorrupt) {
		t.Error("DecodeCount")
	}
	if _, err := AddCount(1, -2); !errors.Is(err, ErrCorrupt) {
		t.Error("AddCount underflow")
	}
	if n, err := AddCount(5, -5); err != nil || n != 0 {
		t.Error("AddCount", n, err)
	}
}

// TestUpdateKeepsStatistics applies random creates, replaces and deletes
// to a store (a map) through Update, and checks the statistics records
// against statistics recomputed from the live documents.
func TestUpdateKeepsStatistics(t *testing.T) {
	en := AnalyzerFor(English)
	rng := rand.New(rand.NewSource(11))
	words := []string{"alpha", "beta", "gamma", "delta", "the", "running", "runs"}
	path := []string{"p"}
	store := map[string][]byte{}
	stats := map[string]uint64{}
	live := map[string]*DocTerms{}
	for step := 0; step < 2000; step++ {
		id := string(rune('a' + rng.Intn(20)))
		old := live[id]
		var nw *DocTerms
		if rng.Intn(4) != 0 {
			s := ""
			for n := rng.Intn(6); n > 0; n-- {
				s += words[rng.Intn(len(words))] + " "
			}
			dt := en.Index(s)
			nw = &dt
		}
		c := Update(path, []byte(id), old, nw)
		for _, k := range c.Deletes {
			if _, ok := store[string(k)]; !ok {
				t.Fatalf("delete of absent %q", k)
			}
			delete(store, string(k))
		}
		for _, kv := range c.Puts {
			store[string(kv.Key)] = kv.Value
		}
		for _, d := range c.Stats {
			n, err := AddCount(stats[string(d.Key)], d.Delta)
			if err != nil {
				t.Fatal(err)
			}
			stats[string(d.Key)] = n
		}
		if nw == nil {
			delete(live, id)
		} else {
			live[id] = nw
		}
	}
	var docs, length uint64
	df := map[string]uint64{}
	postings := 0
	for _, dt := range live {
		docs++
		length += uint64(dt.Length)
		for _, p := range dt.Postings {
			df[p.Term]++
			postings++
		}
	}
	if got := stats[string(PathDocsKey(nil, path))]; got != docs {
		t.Errorf("documents %d, want %d", got, docs)
	}
	if got := stats[string(PathLengthKey(nil, path))]; got != length {
		t.Errorf("length %d, want %d", got, length)
	}
	for k, n := range stats {
		if k[0] != KindTermStats {
			continue
		}
		_, term, err := DecodeTermStatsKey([]byte(k))
		if err != nil {
			t.Fatal(err)
		}
		if df[term] != n {
			t.Errorf("df(%s) = %d, want %d", term, n, df[term])
		}
		delete(df, term)
	}
	for term, n := range df {
		if n != 0 {
			t.Errorf("df(%s) missing", term)
		}
	}
	// The store holds exactly the live postings and lengths.
	if len(store) != postings+len(live) {
		t.Errorf("%d records, want %d", len(store), postings+len(live))
	}
}

func FuzzDecodePosting(f *testing.F) {
	f.Add(EncodePosting(nil, []uint32{1, 2, 900}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, v []byte) {
		pos, err := DecodePosting(v)
		if err != nil {
			return
		}
		if !bytes.Equal(EncodePosting(nil, pos), v) {
			t.Fatalf("%x decodes to %v, which encodes differently", v, pos)
		}
	})
}

func FuzzDecodeKeys(f *testing.F) {
	f.Add(PostingKey(nil, []string{"a", "b"}, "term", []byte("doc")))
	f.Add(LengthKey(nil, []string{"a"}, []byte("doc")))
	f.Add(TermStatsKey(nil, []string{"a"}, "x\x00y"))
	f.Fuzz(func(t *testing.T, k []byte) {
		if path, term, doc, err := DecodePostingKey(k); err == nil {
			if !bytes.Equal(PostingKey(nil, path, term, doc), k) {
				t.Fatalf("posting key %x does not round-trip", k)
			}
		}
		if path, doc, err := DecodeLengthKey(k); err == nil {
			if !bytes.Equal(LengthKey(nil, path, doc), k) {
				t.Fatalf("length key %x does not round-trip", k)
			}
		}
		if path, term, err := DecodeTermStatsKey(k); err == nil {
			if !bytes.Equal(TermStatsKey(nil, path, term), k) {
				t.Fatalf("term stats key %x does not round-trip", k)
			}
		}
		_, _ = DecodeCount(k)
	})
}
