// Package script runs a container's server-side JavaScript (stored
// procedures, pre- and post-triggers, user-defined functions) on the goja
// interpreter, with the Cosmos DB server-side API: getContext(),
// getCollection() and its document methods with (err, resource, options)
// callbacks and the boolean "accepted" result, getRequest(), getResponse(),
// and the __ shortcut.
//
// The package knows JavaScript and the server-side API, and nothing of
// storage, partitions or HTTP. A script reads and writes through a
// Collection, an interface the caller implements over one logical
// partition (in the engine: a snapshot of the partition plus an overlay of
// the script's own writes, submitted afterwards as one atomic command). So
// the script runs outside any write loop, and what a log carries is the
// script's result, never the script.
//
// # Bounds
//
// Every run has Limits: a wall-clock timeout after which goja's Interrupt
// stops the script (ErrTimeout), a soft deadline and a cap on writes and
// written bytes past which operations return accepted = false so that the
// script can return a continuation, a cap on the response body, and a
// bounded call stack.
//
// goja checks the interrupt only between instructions, so builtins that
// could run or allocate without end inside one call are capped (caps.go):
// ArrayBuffers and typed arrays are charged to the memory budget
// (MaxHeapGrowth) before they are allocated; repeat, padStart, padEnd,
// join and JSON.stringify may not build a string larger than it; the array
// builtins, Array.from, apply and split refuse lengths it cannot hold; a regular
// expression match that backtracks stops after MaxMatchTime (ErrTimeout);
// JSON.parse and JSON.stringify refuse nesting deeper than 10000 levels,
// and JSON.stringify stops when the run is interrupted.
//
// A script reaches no file system, network or module loader: goja has
// none unless given one, and the clock and Math.random read the sources
// the caller passes (Env).
//
// # Callbacks
//
// As on Cosmos, a collection operation does its work when called and
// returns whether it was accepted; its callback runs later, after the
// current JavaScript call returns, from a queue drained until empty. An
// operation that fails with no callback aborts the script with its error;
// an error passed to a callback aborts it only if the callback throws.
//
// Programs are compiled once (Compile) and are safe to share; a Runtime
// is not, and each run gets a fresh one, so no state leaks between runs.
package script
