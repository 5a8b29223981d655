// Package lincheck checks histories of concurrent operations on keyed
// registers for linearizability, with github.com/anishathalye/porcupine.
//
// A test records, for each operation a client ran against a database, when
// it was called, when it returned and what it returned (Recorder), and
// Check decides whether some order of the operations, each taking effect
// at one instant between its call and its return, explains every result.
// The operations are those the Cosmos API offers on one item: a read, an
// unconditional write (upsert) and a compare-and-set (a replace with
// If-Match on the etag read with the value). Every write writes a value no
// other write writes, so a value names the write that made it, and an
// etag its value: a compare-and-set is modelled as "if the value is the
// one read". An operation whose outcome the client never learned (a
// timeout, a lost connection) may or may not have taken effect, at any
// time after its call: the model is nondeterministic for those.
//
// It is shaped so for the replication tests to come (leaders killed,
// networks partitioned), which need exactly this check under Strong
// consistency; it already checks the single node under online splits.
// The model is pure and has its own tests against hand-made histories.
package lincheck
