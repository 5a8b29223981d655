package fulltext

// Plan is how a full-text predicate on an indexed path reads the inverted
// index of one physical partition:
//
//  1. For each Read that is not fuzzy, read the posting span
//     PostingPrefix(path, term), restricted to the partition's document
//     keys. For a fuzzy Read, first scan the path's dictionary
//     (TermStatsPrefix) through an Expander, then read the postings of each
//     term it chooses.
//  2. Every document seen in those postings is a candidate; Match decides
//     from the positions read whether it satisfies the predicate. A
//     document that no posting names cannot match (every query needs all
//     its tokens).
//
// The query evaluator may still run the predicate on the documents the plan
// returns; it gets the same answer, up to the fuzzy expansion limit (see
// the package documentation).
type Plan struct {
	Path []string
	// All is true for FullTextContains and FullTextContainsAll, false for
	// FullTextContainsAny.
	All     bool
	Queries []Query
}

// Read is one token whose postings a plan reads.
type Read struct {
	Query, Token int
	Term         string
	// Distance > 0 marks a fuzzy token: Term is expanded first.
	Distance int
}

// Reads lists the tokens to look up, in query and token order.
func (p Plan) Reads() []Read {
	var out []Read
	for qi, q := range p.Queries {
		for ti, t := range q.Tokens {
			out = append(out, Read{Query: qi, Token: ti, Term: t.Term, Distance: q.Distance})
		}
	}
	return out
}

// Terms gives the index terms read for each token of each query:
// expanded[i] holds the terms a Read i (in Reads order) stands for, that
// is [Term] for an exact read and the Expander's choice for a fuzzy one.
// The result is indexed by query, then token.
func (p Plan) Terms(expanded [][]string) [][][]string {
	out := make([][][]string, len(p.Queries))
	i := 0
	for qi, q := range p.Queries {
		out[qi] = make([][]string, len(q.Tokens))
		for ti := range q.Tokens {
			if i < len(expanded) {
				out[qi][ti] = expanded[i]
			}
			i++
		}
	}
	return out
}

// Match decides the predicate for one document: terms is Terms' result and
// positions returns the document's decoded positions of a term (nil when
// it has no posting for it).
func (p Plan) Match(terms [][][]string, positions func(term string) []uint32) bool {
	if len(p.Queries) == 0 || len(terms) != len(p.Queries) {
		return false
	}
	for qi, q := range p.Queries {
		hit := q.Count(terms[qi], positions) > 0
		if hit && !p.All {
			return true
		}
		if !hit && p.All {
			return false
		}
	}
	return p.All
}
