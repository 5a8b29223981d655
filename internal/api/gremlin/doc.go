// Package gremlin serves Parsec's Gremlin API: the Gremlin Server protocol
// over WebSocket, as Azure Cosmos DB's Gremlin endpoint speaks it, over
// graph containers of the engine. Its subpackages are the pieces of one
// request; this package is the shell around them that owns the sockets:
//
//	frame ──gio──▶ Request ──lang.Parse──▶ *lang.Traversal
//	      ──traversal.Run over store.Store (engine container)──▶ results
//	      ──gio──▶ response frames (batches)
//
// The subpackages:
//
//   - lang parses scripts (gremlin-groovy and gremlin-lang are one grammar,
//     without lambdas) with bindings; bytecode requests arrive already as a
//     *lang.Traversal from gio.
//   - traversal evaluates breadth-first against a graph.Store and collects
//     the writes for one Apply at the end.
//   - store maps vertices and edges onto items of a partitioned container
//     in Cosmos DB's document shape and charges request units.
//   - gio decodes requests and encodes responses in GraphSON 2.0 (Cosmos's
//     untyped form), GraphSON 3.0 and GraphBinary 1.0.
//
// What this package adds: SASL PLAIN authentication whose user name,
// /dbs/<database>/colls/<graph>, selects the connection's graph and whose
// password is the primary or read-only key; result batches (206 then 200,
// or 204); Cosmos's status attributes (x-ms-request-charge, ...) on every
// response; the mapping of every error to a Gremlin status and Cosmos's
// x-ms-status-code (status.go, the one place); and the limits: script
// size, traversal time, idle connections, connections, requests in flight
// per connection, frame size. A panic while serving a request becomes a
// 500 answer to that request.
//
// Server is shaped as the MongoDB API's server: New(Config), Serve(ln),
// Close. Codec, Evaluator and OpenStore are seams: the server's are the
// subpackages (WireCodec, Machine, OpenEngineStore); the protocol tests
// plug in small ones to drive each status by hand. DESIGN.md says why the
// protocol choices are as they are.
package gremlin
