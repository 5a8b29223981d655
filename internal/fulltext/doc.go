// Package fulltext is the pure core of Parsec's full-text search: the
// full-text policy, text analysis, the records of the inverted index and
// their encoding, matching (FullTextContains, FullTextContainsAll,
// FullTextContainsAny, fuzzy terms) and scoring (BM25 for FullTextScore,
// Reciprocal Rank Fusion for ORDER BY RANK RRF). It does no I/O: like
// package index, it computes the records that the engine writes in the same
// storage batch as the item, and decides from records the engine reads
// back.
//
// # Policy
//
// Compile validates a container's fullTextPolicy ({"defaultLanguage",
// "fullTextPaths":[{"path","language"}]}) together with its
// indexingPolicy.fullTextIndexes ([{"path"}]), with the service's error
// messages where they are known (PolicyError, ErrInvalidPolicy → 400). The
// languages are the service's: en-US (generally available), de-DE, es-ES,
// fr-FR, it-IT, pt-PT and pt-BR (preview). Paths are explicit property
// paths: no wildcards, no array segments. Every full-text index path must
// be in the full-text policy. Full-text functions also work on paths with
// no policy or no index (the service allows it, at a higher charge): they
// then use the default language and a scan.
//
// # Analysis
//
// An Analyzer turns a text into terms, the same way for documents and for
// the arguments of the full-text functions:
//
//  1. The text is put in Unicode normalization form C (only its first
//     MaxTextBytes are read).
//  2. Words are runs of letters, digits and combining marks; an apostrophe
//     (' or ’) between two of them stays in the word, as '. Each Han,
//     Hiragana or Katakana character is a word. Everything else separates
//     words. Words are lower-cased (Unicode simple case mapping).
//     Diacritics are kept: the service does not document folding them, and
//     the Snowball stemmers of the preview languages depend on them.
//  3. Each word has a position, its index among the words of the text. A
//     stop word (English only: the service's published list, as it says
//     stop words apply to English only) or a word over MaxTermBytes is
//     dropped but keeps its position, so a phrase matches only with the
//     same gap. At most MaxTokens words are read.
//  4. The remaining words are stemmed with the Snowball algorithm of the
//     language: English (Porter2), German, Spanish, French, Italian, and
//     Portuguese for both pt-PT and pt-BR. Each is written from the
//     algorithm's published description (https://snowballstem.org/
//     algorithms/<language>/stemmer.html, in its Snowball 2 form; the
//     files name the revision) and checked against the Snowball project's
//     own vocabularies (testdata: a sample of each; the whole vocabularies,
//     20,000 to 42,000 words each, matched when the stemmers were
//     written). The service does not say which stemmers it uses, so stems
//     may differ from its own in rare words; matching and scoring only
//     need documents and arguments to be stemmed alike.
//
// A document's length is its number of terms (stop words excluded).
//
// # Matching
//
// A function argument is analysed into a Query: one or more terms with
// their offsets. The service documents phrases ("FullTextContains(c.text,
// \"red bicycle\")" finds the phrase), so a query matches where all its
// terms occur at their offsets from one another; a one-word query matches
// wherever the word occurs. An argument that analyses to nothing (only stop
// words) matches nothing. A fuzzy argument {"term": t, "distance": d}
// (0 ≤ d ≤ MaxDistance = 2, as the service allows) matches each of its
// terms to any term within Levenshtein distance d (WithinDistance, banded
// and bounded). FullTextContainsAll needs every argument, Any one of them.
//
// Text.Count and Query.Count do the matching on positions; direct
// evaluation (Analyzer.Contains and friends, for paths without an index or
// residual filters) and index evaluation (Plan) share it. The one
// difference: the index expands a fuzzy term to at most MaxFuzzyExpansions
// (10) dictionary terms, the closest first (the service: "a maximum edit
// distance of 2 and 10 suggestions"), while direct evaluation accepts every
// term of the text within the distance.
//
// # Index layout
//
// Every key starts with a kind byte; the engine puts its own prefix before
// it (container and index tag; for statistics, also the physical
// partition). Paths and terms are written escaped (0x00 → 0x00 0xFF,
// terminated by 0x00 0x01), so byte order is string order and no encoding
// is a prefix of another. A document key is the engine's (effective
// partition key, then id) and comes last.
//
//	posting   0x01 | path | term | docKey    → tf, then positions (delta-coded uvarints)
//	length    0x02 | path | docKey           → length in terms (uvarint)
//	path stat 0x03 | path | 0x01             → documents with a text at path
//	          0x03 | path | 0x02             → total length of those texts
//	term stat 0x04 | path | term             → documents whose text has term
//	doc stat  0x05                           → documents in the partition
//
// Postings sort by path, term, then document, so one term's postings are
// one span, and each physical partition reads its own slice of it by the
// effective partition key range: a split moves no posting. Positions are
// stored because phrases need them. Update computes, for a document whose
// text at a path changes (created, replaced, deleted), the records to put
// and delete and the statistics deltas; the engine adds ±1 to the document
// count on every create and delete. Decoders validate everything (ErrCorrupt)
// and never panic; values have exactly one encoding.
//
// # Statistics and scoring
//
// FullTextScore ranks by BM25 with statistics over the whole container, as
// the service does: its query plan gathers, per partition, COUNT(1) (every
// document), the total word count at the path and one hit count per
// argument (the documents that contain it), and sums them. Stats is that
// sum (Stats.Add), read from each partition's statistics records (a term's
// df is its term stat record; a phrase's df is counted from postings) or,
// without an index, from documents (DocStats). After a split each child
// keeps its own records, recomputed from its slice of the postings; the
// sum over partitions is unchanged.
//
//	idf(q)   = ln(1 + (N − n(q) + 0.5) / (n(q) + 0.5))
//	score(d) = Σ_q idf(q) · tf(q,d)·(k1+1) / (tf(q,d) + k1·(1 − b + b·|d|/avgdl))
//
// with N the document count, avgdl the total length / N, and k1 = 1.2,
// b = 0.75: the service calls its scoring "standard BM25" without
// publishing parameters, so these are the customary ones.
//
// RRF fuses component rankings as the SDKs do for hybrid search
// (azure-cosmos Python and Java hybrid search aggregators): per component,
// documents are ranked by score in the component's direction, equal scores
// share a rank and ranks are dense; the fused score is
// Σ weight/(60 + rank), highest first.
package fulltext
