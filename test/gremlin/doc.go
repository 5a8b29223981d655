// Package gremlin tests Parsec's Gremlin API end to end with a real driver:
// gremlin-go v3.8.1 (GraphBinary, its only serializer) against the real
// server started in-process with --gremlin-listen, over TinkerPop's
// "modern" graph partitioned on the name property.
package gremlin
