// Package fulltext is the pure core of Parsec's full-text search: text
// analysis (tokens, stop words, stemming), full-text policies, the terms of
// the inverted index and their encoding, matching and BM25 scoring. It does
// no I/O.
package fulltext
