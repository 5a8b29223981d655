// Package searchpolicy reads a container's search policies as the NoSQL
// API receives them: the vectorEmbeddingPolicy and fullTextPolicy
// properties of the container resource, and the vectorIndexes and
// fullTextIndexes of its indexingPolicy. Parse validates them together, as
// the service does on create and replace, with the service's error texts
// where they are known (the SDKs' tests match them: azure-sdk-for-js
// test/public/functional/vectorEmbeddingPolicy.spec.ts, azure-sdk-for-python
// tests/test_vector_policy_async.py), and CheckReplace enforces what a
// replace may not change. Policies.Search gives the query layer what the
// vector and full-text functions need (eval.Search).
//
// The algorithms and their own validation live in packages vector and
// fulltext; this package only joins the JSON of the container resource to
// them, so that the engine and the API layer share one reading.
//
// What is stored is the JSON the client sent (the container resource
// echoes it); Parse is run again whenever a query is compiled. Parsec does
// not add vector paths to the regular index's excludedPaths itself: the
// service recommends excluding them (they are large arrays that the
// regular index would index element by element) but does not require it.
package searchpolicy
