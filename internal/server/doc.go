// Package server wires a Parsec server together: storage, engine and the
// Cosmos API behind one HTTP(S) listener. cmd/parsec turns flags into Options
// and calls Start; tests call Start directly to run a real server in-process.
//
// With the well-known emulator key the server listens only on loopback and
// answers only requests whose Host is a loopback name or Advertise's host
// (host.go), against DNS rebinding.
package server
