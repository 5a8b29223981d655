package engine

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"slices"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/storage"
)

// The stored full-text index.
//
// Every write keeps, in the same batch as the item, the inverted index of
// each path the container's indexing policy names in fullTextIndexes
// (package fulltext computes the records: postings, lengths and the
// partition's statistics; storage.TextRecordPrefix and TextStatsPrefix
// put them in key family T). A path's records carry a tag, the hash of the
// path and its language, so that the records of a path analysed one way
// never mix with those of another.
//
// Which tags are kept: a tag is complete when every item of the container
// has its records, which holds for the tags of a container's policy at its
// creation (there are no items yet) as long as the policy keeps them. The
// container record lists them (ContainerInfo.TextIndexed); a replace keeps
// those the new policy still has and adds none, so a path indexed by a
// later policy change, or whose language changed, is searched by the scan,
// as before the index existed. (Building such a tag online, as the regular
// index is rebuilt after a policy change, is not done yet.) Writes maintain
// the complete tags only: an incomplete tag's items would have no records
// to update. A complete tag was in every policy since the container's
// creation, so every replica, whatever policy it applies a write under,
// maintains it. A tag that a replace drops leaves its records behind,
// unread (it can never become complete again), until the container is
// deleted.
//
// The partition's document count is kept per tag as the fulltext
// DocStatsKey record (+1 on a create, −1 on a delete, whatever the text),
// so that a tag's statistics are self-contained.
//
// A split rewrites the statistics of the parent for each child from the
// postings and length records in the child's EPK range (the records
// themselves do not move; see splitText).

// textPath is one indexed full-text path of a container's policy.
type textPath struct {
	segs []string
	tag  uint32
	an   *fulltext.Analyzer
}

// textConfig is what writes and queries need of a container's full-text
// indexes.
type textConfig struct {
	paths    []textPath
	segs     [][]string
	complete map[uint32]bool
}

// textTag names an indexed path analysed in a language.
func textTag(segs []string, lang fulltext.Language) uint32 {
	h := fnv.New32a()
	for _, s := range segs {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write([]byte{1})
	h.Write([]byte(lang))
	return h.Sum32()
}

// textPolicyTags returns the tags of the full-text indexes of a container
// record's policies (nil when it has none or they do not compile).
func textPolicyTags(info ContainerInfo) []uint32 {
	cfg := textConfigOf(info, true)
	if cfg == nil {
		return nil
	}
	var out []uint32
	for _, p := range cfg.paths {
		out = append(out, p.tag)
	}
	return out
}

// newTextConfig derives the full-text indexes of a container record; nil
// when it has none.
func newTextConfig(info ContainerInfo) *textConfig { return textConfigOf(info, false) }

// textConfigOf is newTextConfig, or with tags set every indexed path of
// the policy, complete or not (textPolicyTags).
func textConfigOf(info ContainerInfo, tags bool) *textConfig {
	if info.Extra[fullTextPolicyProp] == nil {
		return nil
	}
	pol, err := fulltext.Compile(info.Extra[fullTextPolicyProp], info.IndexingPolicy)
	if err != nil {
		return nil
	}
	cfg := &textConfig{complete: map[uint32]bool{}}
	for _, t := range info.TextIndexed {
		cfg.complete[t] = true
	}
	for _, p := range pol.Indexed() {
		tp := textPath{segs: p.Segments, tag: textTag(p.Segments, p.Language), an: fulltext.AnalyzerFor(p.Language)}
		if tags {
			cfg.paths = append(cfg.paths, tp)
			continue
		}
		if !cfg.complete[tp.tag] {
			continue // see the package comment: only complete tags are kept
		}
		cfg.paths = append(cfg.paths, tp)
		cfg.segs = append(cfg.segs, p.Segments)
	}
	if len(cfg.paths) == 0 {
		return nil
	}
	return cfg
}

// completeTag returns the tag of an indexed path whose records every item
// has, if the path has one.
func (cfg *textConfig) completeTag(segs []string) (textPath, bool) {
	if cfg == nil {
		return textPath{}, false
	}
	for _, p := range cfg.paths {
		if slices.Equal(p.segs, segs) && cfg.complete[p.tag] {
			return p, true
		}
	}
	return textPath{}, false
}

// keepTextIndexed returns the complete tags a replace keeps: those of the
// old record that the new policies still index.
func keepTextIndexed(old []uint32, next ContainerInfo) []uint32 {
	now := textPolicyTags(next)
	var out []uint32
	for _, t := range old {
		if slices.Contains(now, t) {
			out = append(out, t)
		}
	}
	return out
}

// textDocKey is the fulltext document key of an item: its EPK, 0x00, id.
func textDocKey(epk, id string) []byte {
	k := make([]byte, 0, len(epk)+1+len(id))
	k = append(k, epk...)
	k = append(k, 0)
	return append(k, id...)
}

// textString returns the string a raw JSON value holds.
func textString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	return jsondoc.UnquoteString(raw)
}

// textRecords counts the full-text index work of one write, for its
// charge, as index terms are counted (termCounts): the postings of the
// version written (of the deleted one, for a delete), and the postings
// written or deleted.
type textRecords struct{ terms, changed int }

// text updates the full-text records of an item whose version goes from
// old to doc (nil: none), in rangeID's statistics.
func (t *txn) text(ac *applyCtx, op *Op, old, doc []byte) (textRecords, error) {
	cfg := ac.text
	var tr textRecords
	if cfg == nil || (old == nil && doc == nil) {
		return tr, nil
	}
	var ov, nv jsondoc.Scanned
	var err error
	if old != nil {
		if ov, err = jsondoc.Scan(old, cfg.segs); err != nil {
			return tr, corrupt("item %q (effective partition key %s) cannot be read for its full-text index: %v", op.ID, op.EPK, err)
		}
	}
	if doc != nil {
		if nv, err = jsondoc.Scan(doc, cfg.segs); err != nil {
			return tr, badRequest("the document cannot be indexed: %v", err)
		}
	}
	docKey := textDocKey(op.EPK, op.ID)
	for i, p := range cfg.paths {
		stats := storage.TextStatsPrefix(nil, ac.rid, ac.rangeID, p.tag)
		if old == nil || doc == nil {
			d := int64(1)
			if doc == nil {
				d = -1
			}
			if err := t.addStat(fulltext.DocStatsKey(bytes.Clone(stats)), d); err != nil {
				return tr, err
			}
		}
		var ovv, nvv []byte
		if old != nil {
			ovv = ov.Values[i]
		}
		if doc != nil {
			nvv = nv.Values[i]
		}
		os, ook := textString(ovv)
		ns, nok := textString(nvv)
		if ook && nok && os == ns {
			continue
		}
		var o, n *fulltext.DocTerms
		if ook {
			dt := p.an.Index(os)
			o = &dt
		}
		if nok {
			dt := p.an.Index(ns)
			n = &dt
		}
		if o == nil && n == nil {
			continue
		}
		ch := fulltext.Update(p.segs, docKey, o, n)
		recs := storage.TextRecordPrefix(nil, ac.rid, p.tag)
		for _, kv := range ch.Puts {
			t.put(append(bytes.Clone(recs), kv.Key...), kv.Value)
		}
		for _, k := range ch.Deletes {
			t.put(append(bytes.Clone(recs), k...), nil)
		}
		for _, s := range ch.Stats {
			if err := t.addStat(append(bytes.Clone(stats), s.Key...), s.Delta); err != nil {
				return tr, err
			}
		}
		if n != nil {
			tr.terms += len(n.Postings)
		} else {
			tr.terms += len(o.Postings)
		}
		tr.changed += len(ch.Puts) + len(ch.Deletes)
	}
	return tr, nil
}

// addStat adds delta to a statistics record; a record that reaches zero is
// deleted, so that a term no document has leaves the dictionary.
func (t *txn) addStat(key []byte, delta int64) error {
	if delta == 0 {
		return nil
	}
	var n uint64
	v, ok, err := t.get(key)
	if err != nil {
		return err
	}
	if ok {
		if n, err = fulltext.DecodeCount(v); err != nil {
			return corrupt("full-text statistics record %x: %v", key, err)
		}
	}
	if n, err = fulltext.AddCount(n, delta); err != nil {
		return corrupt("full-text statistics record %x: %v", key, err)
	}
	if n == 0 {
		t.put(key, nil)
		return nil
	}
	t.put(key, fulltext.EncodeCount(nil, n))
	return nil
}

// textSpan bounds the records under prefix p whose document key's EPK is
// in [lo, hi) (hi "" means no upper bound).
func textSpan(p []byte, lo, hi string) ([]byte, []byte) {
	a := append(bytes.Clone(p), lo...)
	if hi == "" {
		return a, storage.PrefixEnd(p)
	}
	return a, append(bytes.Clone(p), hi...)
}

// splitText computes the full-text statistics of the children of a split
// of partition rangeID, from the committed records in each child's EPK
// range: per tag, the document count (the child's items), and per path the
// documents and total length (length records) and per term its document
// frequency (postings). It returns the records to write; the parent's are
// deleted by the caller (TextPartitionStatsSpan).
func splitText(rd stateReader, rid [storage.RidLen]byte, rangeID string, children []RangeInfo, states []partState) ([]fulltext.KV, error) {
	lo, hi := storage.TextPartitionStatsSpan(rid, rangeID)
	type stat struct {
		tag uint32
		key []byte
	}
	var parent []stat
	err := rd.Iterate(lo, hi, func(k, _ []byte) (bool, error) {
		rest := k[len(lo):]
		if len(rest) < 5 {
			return false, corrupt("full-text statistics key %x is too short", k)
		}
		parent = append(parent, stat{binary.BigEndian.Uint32(rest), bytes.Clone(rest[4:])})
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	var out []fulltext.KV
	for ci, ch := range children {
		max := openMax(ch.Max)
		for _, s := range parent {
			var n uint64
			switch {
			case len(s.key) == 1 && s.key[0] == fulltext.KindDocStats:
				if states[ci].Items > 0 {
					n = uint64(states[ci].Items)
				}
			case s.key[0] == fulltext.KindTermStats:
				path, term, err := fulltext.DecodeTermStatsKey(s.key)
				if err != nil {
					return nil, corrupt("full-text statistics key %x: %v", s.key, err)
				}
				p := append(storage.TextRecordPrefix(nil, rid, s.tag), fulltext.PostingPrefix(nil, path, term)...)
				a, b := textSpan(p, ch.Min, max)
				if err := rd.Iterate(a, b, func(_, _ []byte) (bool, error) { n++; return true, nil }); err != nil {
					return nil, err
				}
			case s.key[0] == fulltext.KindPathStats && len(s.key) > 1:
				path, length, err := fulltext.DecodePathStatsKey(s.key)
				if err != nil {
					return nil, corrupt("full-text statistics key %x: %v", s.key, err)
				}
				p := append(storage.TextRecordPrefix(nil, rid, s.tag), fulltext.LengthKey(nil, path, nil)...)
				a, b := textSpan(p, ch.Min, max)
				err = rd.Iterate(a, b, func(_, v []byte) (bool, error) {
					if !length {
						n++
						return true, nil
					}
					l, err := fulltext.DecodeCount(v)
					if err != nil {
						return false, corrupt("full-text length record: %v", err)
					}
					n += l
					return true, nil
				})
				if err != nil {
					return nil, err
				}
			default:
				return nil, corrupt("full-text statistics key %x has an unknown kind", s.key)
			}
			if n == 0 {
				continue
			}
			k := append(storage.TextStatsPrefix(nil, rid, ch.ID, s.tag), s.key...)
			out = append(out, fulltext.KV{Key: k, Value: fulltext.EncodeCount(nil, n)})
		}
	}
	return out, nil
}
