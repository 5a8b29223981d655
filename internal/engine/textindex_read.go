package engine

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/internal/storage"
)

// maxStatsPostings bounds the postings one statistics gathering reads for
// its phrases; past it the query falls back to reading the items.
const maxStatsPostings = 1 << 20

// storedStats gathers the BM25 statistics of the plan's FullTextScore
// calls from the stored full-text index: per physical partition its
// document count, its path's document and length totals and each term's
// document frequency, summed over the container; a phrase's document
// frequency is counted from its terms' postings. ok is false when some
// call's path has no complete index, or a call searches a fuzzy term
// (whose direct matching the index's bounded expansion does not
// reproduce): the caller then reads the items.
//
// Expired items that the store still holds count here (they leave it when
// the expiry sweep deletes them), while the scan skips them.
func (c *Container) storedStats(plan *exec.Plan) ([]fulltext.Stats, bool, error) {
	targets := plan.ScoreTargets()
	cfg := c.text.Load()
	tps := make([]textPath, len(targets))
	for i, t := range targets {
		tp, ok := cfg.completeTag(t.Path)
		if !ok {
			return nil, false, nil
		}
		for _, q := range t.Queries {
			if q.Distance > 0 {
				return nil, false, nil
			}
		}
		tps[i] = tp
	}
	snap := c.e.readView()
	defer snap.Close()
	ranges, err := partitionIDs(snap, c.rid)
	if err != nil {
		return nil, false, err
	}
	work := plan.SearchWork()
	read := 0
	get := func(k []byte) (uint64, error) {
		read++
		v, err := snap.Get(nil, k)
		if err == storage.ErrNotFound {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("%w: cannot read full-text statistics: %v", ErrUnavailable, err)
		}
		n, err := fulltext.DecodeCount(v)
		if err != nil {
			return 0, corrupt("full-text statistics record %x: %v", k, err)
		}
		return n, nil
	}
	out := make([]fulltext.Stats, len(targets))
	for i, t := range targets {
		out[i].DF = make([]uint64, len(t.Queries))
		for _, r := range ranges {
			p := storage.TextStatsPrefix(nil, c.rid, r, tps[i].tag)
			var s fulltext.Stats
			s.DF = make([]uint64, len(t.Queries))
			if s.Documents, err = get(fulltext.DocStatsKey(bytes.Clone(p))); err != nil {
				return nil, false, err
			}
			if s.TotalLength, err = get(fulltext.PathLengthKey(bytes.Clone(p), t.Path)); err != nil {
				return nil, false, err
			}
			for qi, q := range t.Queries {
				if len(q.Tokens) == 1 {
					if s.DF[qi], err = get(fulltext.TermStatsKey(bytes.Clone(p), t.Path, q.Tokens[0].Term)); err != nil {
						return nil, false, err
					}
				}
			}
			if err := out[i].Add(s); err != nil {
				return nil, false, err
			}
		}
		for qi, q := range t.Queries {
			if len(q.Tokens) < 2 {
				continue
			}
			n, postings, err := phraseDocs(snap, storage.TextRecordPrefix(nil, c.rid, tps[i].tag), t.Path, q)
			read += postings
			if errors.Is(err, errTooManyPostings) {
				return nil, false, nil
			}
			if err != nil {
				return nil, false, err
			}
			out[i].DF[qi] = n
		}
	}
	if work != nil {
		work.TextRecords.Add(int64(read))
	}
	return out, true, nil
}

var errTooManyPostings = errors.New("too many postings")

// phraseDocs counts the documents of the whole container whose text at
// path matches the phrase q, from the postings of its terms.
func phraseDocs(rd stateReader, recs []byte, path []string, q fulltext.Query) (uint64, int, error) {
	pos := map[string]map[string][]uint32{} // docKey → term → positions
	read := 0
	seen := map[string]bool{}
	for _, tok := range q.Tokens {
		if seen[tok.Term] {
			continue
		}
		seen[tok.Term] = true
		p := append(bytes.Clone(recs), fulltext.PostingPrefix(nil, path, tok.Term)...)
		err := rd.Iterate(p, storage.PrefixEnd(p), func(k, v []byte) (bool, error) {
			read++
			if read > maxStatsPostings {
				return false, errTooManyPostings
			}
			ps, err := fulltext.DecodePosting(v)
			if err != nil {
				return false, corrupt("full-text posting %x: %v", k, err)
			}
			doc := string(k[len(p):])
			if pos[doc] == nil {
				pos[doc] = map[string][]uint32{}
			}
			pos[doc][tok.Term] = ps
			return true, nil
		})
		if err != nil {
			return 0, read, err
		}
	}
	cands := make([][]string, len(q.Tokens))
	for i, tok := range q.Tokens {
		cands[i] = []string{tok.Term}
	}
	var n uint64
	for _, terms := range pos {
		if len(terms) < len(seen) {
			continue
		}
		if q.Count(cands, func(term string) []uint32 { return terms[term] }) > 0 {
			n++
		}
	}
	return n, read, nil
}

// partitionIDs lists the range ids of a container's physical partitions
// in a snapshot, from their state and index records.
func partitionIDs(rd stateReader, rid [storage.RidLen]byte) ([]string, error) {
	lo, hi := storage.ContainerPartitionsSpan(rid)
	var out []string
	err := rd.Iterate(lo, hi, func(k, _ []byte) (bool, error) {
		id := k[len(lo):]
		if i := bytes.IndexByte(id, 0); i >= 0 {
			id = id[:i]
		}
		if len(out) == 0 || out[len(out)-1] != string(id) {
			out = append(out, string(id))
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: cannot list the partitions: %v", ErrUnavailable, err)
	}
	return out, nil
}

// textCandidates serves a full-text conjunct of the plan's WHERE clause
// (FullTextContains, FullTextContainsAll, FullTextContainsAny) from the
// stored postings: the item keys, sorted, of the documents that have every
// term of a query (every query for Contains and ContainsAll, one for Any).
// The query still evaluates the predicate on each item, so phrases are
// checked there. ok is false when no conjunct's path has a complete index,
// the conjunct searches a fuzzy term (the index expands it to at most 10
// terms, which the direct evaluation does not), or its postings pass
// maxStatsPostings: the query then scans. Of several conjuncts, the one
// with the fewest candidates is used.
func (c *Container) textCandidates(plan *exec.Plan) (keys [][]byte, ok bool, err error) {
	cfg := c.text.Load()
	if cfg == nil {
		return nil, false, nil
	}
	read := 0
	defer func() {
		if w := plan.SearchWork(); w != nil {
			w.TextRecords.Add(int64(read))
		}
	}()
	var best map[string]bool
	found := false
	for _, f := range plan.TextFilters() {
		tp, complete := cfg.completeTag(f.Path)
		if !complete || slices.ContainsFunc(f.Queries, func(q fulltext.Query) bool { return q.Distance > 0 }) {
			continue
		}
		recs := storage.TextRecordPrefix(nil, c.rid, tp.tag)
		docs := func(term string) (map[string]bool, error) {
			p := append(bytes.Clone(recs), fulltext.PostingPrefix(nil, f.Path, term)...)
			out := map[string]bool{}
			err := c.e.store.Iterate(p, storage.PrefixEnd(p), func(k, _ []byte) (bool, error) {
				read++
				if read > maxStatsPostings {
					return false, errTooManyPostings
				}
				out[string(k[len(p):])] = true
				return true, nil
			})
			return out, err
		}
		var set map[string]bool
		for qi, q := range f.Queries {
			var qset map[string]bool
			if len(q.Tokens) == 0 {
				qset = map[string]bool{} // only stop words: matches nothing
			}
			for _, tok := range q.Tokens {
				d, err := docs(tok.Term)
				if errors.Is(err, errTooManyPostings) {
					return nil, false, nil
				}
				if err != nil {
					return nil, false, fmt.Errorf("%w: cannot read full-text postings: %v", ErrUnavailable, err)
				}
				qset = intersect(qset, d)
			}
			switch {
			case qi == 0:
				set = qset
			case f.All:
				set = intersect(set, qset)
			default:
				for k := range qset {
					set[k] = true
				}
			}
		}
		if !found || len(set) < len(best) {
			best, found = set, true
		}
	}
	if !found {
		return nil, false, nil
	}
	keys = make([][]byte, 0, len(best))
	for dk := range best {
		keys = append(keys, storage.AppendItemKeyFromSuffix(nil, c.rid, []byte(dk)))
	}
	slices.SortFunc(keys, bytes.Compare)
	return keys, true, nil
}

// intersect returns the documents in both a and b; a nil a is everything.
func intersect(a, b map[string]bool) map[string]bool {
	if a == nil {
		return b
	}
	out := map[string]bool{}
	for k := range a {
		if b[k] {
			out[k] = true
		}
	}
	return out
}
