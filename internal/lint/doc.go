// Package lint holds no code: its tests check house rules over the whole
// module that the compiler cannot, in the manner of Pebble's lint test.
//
//   - Only internal/storage imports Pebble (tests may use Pebble's vfs, to
//     crash or fill an in-memory disk).
//   - net/http is imported only at the edge: the commands, the HTTP API, the
//     server, authentication and the load generator. internal/engine is the
//     one remaining exception, until it stops speaking HTTP status codes;
//     no other package may start.
package lint
