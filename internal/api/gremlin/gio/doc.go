// Package gio is the Gremlin Server protocol as Parsec's Gremlin endpoint
// speaks it: the request and response messages and their serializers
// (GraphSON 2.0 and 3.0, GraphBinary 1.0). It is pure: it turns frame
// bytes into a Request and a Response into bytes, and owns no sockets.
//
// Shape and reasons:
//
//   - Requests decode into one tree whatever the client sent. A script
//     stays a string for the lang parser; bytecode (op "bytecode", the
//     fluent APIs of gremlin-go and gremlin-javascript) decodes straight
//     into *lang.Traversal, with P/TextP as lang.P, enums as lang.Token and
//     bindings replaced by their values, so the evaluator sees one form.
//     A vertex or edge given as a step argument (g.V(v)) decodes to its id;
//     lambdas, traversal strategies (withStrategies) and custom types are
//     refused with an error naming them.
//   - Responses encode graph values (package graph). GraphSON 2.0 and
//     plain application/json are answered as Azure Cosmos DB answers them:
//     untyped JSON (a vertex is {"id","label","type":"vertex",
//     "properties":{k:[{"id","value"}]}}), which gremlin-javascript's
//     GraphSON2Reader passes through unchanged. GraphSON 3.0 is written
//     typed as Gremlin Server writes it, and GraphBinary 1.0 in the layout
//     gremlin-go v3.8.1 reads (it is gremlin-go's only serializer). A
//     bytecode answer sets Result.Traversers, and each value travels in a
//     Traverser of bulk 1 as the fluent APIs expect.
//   - Every decoder is bounded (Limits: body size, nesting, collection
//     lengths; a declared length can never exceed the bytes left) and
//     answers bad input with a *DecodeError carrying the request id when it
//     was read, never a panic, so the server can answer 498/499.
package gio
