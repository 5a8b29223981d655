// Package lint holds no code: its tests check house rules over the whole
// module that the compiler cannot, in the manner of Pebble's lint test.
//
//   - Only internal/storage imports Pebble (tests may use Pebble's vfs, to
//     crash or fill an in-memory disk).
//   - net/http is imported only at the edge: the commands, the HTTP API, the
//     server, authentication and the load generator. The engine speaks no
//     HTTP: its results carry typed errors and outcomes, and the API layer
//     derives every status from them.
//   - The pure packages (partition, epk, index, jsondoc, binfmt and the query
//     language's token, ast, scanner and parser) import no I/O, clock,
//     goroutine plumbing, storage or stateful layer of the module.
//   - No non-test file returns an error whose message starts with "BUG"
//     (errors.New or fmt.Errorf with such a literal): a broken invariant
//     panics with "BUG:"; damaged stored data wraps engine.ErrCorrupt; a
//     broken invariant where a panic could take the server down (a loop or
//     query goroutine with no recover) wraps engine.ErrInternal.
package lint
