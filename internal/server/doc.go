// Package server wires a Parsec server together: storage, engine and the
// Cosmos API behind one HTTP(S) listener. cmd/parsec turns flags into Options
// and calls Start; tests call Start directly to run a real server in-process.
package server
