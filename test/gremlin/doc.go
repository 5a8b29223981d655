// Package gremlin tests Parsec's Gremlin API end to end with a real driver:
// gremlin-go v3.8.1 (GraphBinary, its only serializer) against the real
// server started in-process with --gremlin-listen, over TinkerPop's
// "modern" and "crew" graphs, each partitioned on the name property, with
// answers written by hand from the Gremlin reference documentation (the
// crew's multi-properties and meta-properties in crew_test.go). The
// benchmarks (bench_test.go) compare one- and two-hop traversals with
// NoSQL point reads.
package gremlin
