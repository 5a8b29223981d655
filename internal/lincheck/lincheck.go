package lincheck

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Kind is an operation's kind.
type Kind uint8

const (
	// Read reads a key's value ("" when there is none).
	Read Kind = iota
	// Write sets a key's value unconditionally.
	Write
	// CAS sets a key's value when its value is Expect.
	CAS
)

// Input is an operation as called.
type Input struct {
	Key    string
	Kind   Kind
	Value  string // Write, CAS: the value written
	Expect string // CAS: the value that must be there
}

// Output is what an operation returned.
type Output struct {
	// Unknown: the client does not know whether the operation took
	// effect (it may have, at any time after its call).
	Unknown bool
	// Value is what a Read read ("" for none).
	Value string
	// OK is whether a CAS took effect (a Write always does).
	OK bool
}

// Recorder collects a history. Its methods may be called concurrently.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []porcupine.Operation
}

// NewRecorder returns an empty history whose clock starts now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Now is the recorder's clock, for an operation's call.
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Add records an operation of client that was called at call (from Now)
// and has just returned out.
func (r *Recorder) Add(client int, in Input, call int64, out Output) {
	ret := r.Now()
	if out.Unknown {
		ret = math.MaxInt64 // it may take effect at any time after its call
	}
	r.mu.Lock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	r.mu.Unlock()
}

// Len returns how many operations are recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ops)
}

// Known returns how many recorded operations have a known outcome.
func (r *Recorder) Known() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, op := range r.ops {
		if !op.Output.(Output).Unknown {
			n++
		}
	}
	return n
}

// Await waits until n more operations than now are recorded, and reports
// whether they were before timeout: a test paces its faults by its
// clients' progress, whatever the machine's speed.
func (r *Recorder) Await(n int, timeout time.Duration) bool {
	want, limit := r.Len()+n, time.Now().Add(timeout)
	for r.Len() < want {
		if time.Now().After(limit) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// History returns the operations recorded.
func (r *Recorder) History() []porcupine.Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]porcupine.Operation(nil), r.ops...)
}

// Model is the sequential specification of a map of registers with
// compare-and-set, partitioned by key.
var Model = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(Input).Key
			byKey[k] = append(byKey[k], op)
		}
		keys := make([]string, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, len(keys))
		for i, k := range keys {
			out[i] = byKey[k]
		}
		return out
	},
	Init: func() []interface{} { return []interface{}{""} },
	Step: func(state, input, output interface{}) []interface{} {
		return step(state.(string), input.(Input), output.(Output))
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(Input), output.(Output)
		res := fmt.Sprintf("%q", out.Value)
		switch {
		case out.Unknown:
			res = "?"
		case in.Kind != Read:
			res = fmt.Sprint(out.OK)
		}
		switch in.Kind {
		case Read:
			return fmt.Sprintf("read(%s) -> %s", in.Key, res)
		case Write:
			return fmt.Sprintf("write(%s, %q) -> %s", in.Key, in.Value, res)
		}
		return fmt.Sprintf("cas(%s, %q -> %q) -> %s", in.Key, in.Expect, in.Value, res)
	},
}

// step returns the states a register in state may reach by the operation.
func step(state string, in Input, out Output) []interface{} {
	switch in.Kind {
	case Read:
		if out.Unknown || out.Value == state {
			return []interface{}{state}
		}
		return nil
	case Write:
		if out.Unknown {
			return []interface{}{state, in.Value}
		}
		return []interface{}{in.Value}
	}
	match := state == in.Expect
	switch {
	case out.Unknown && match:
		return []interface{}{state, in.Value}
	case out.Unknown:
		return []interface{}{state}
	case out.OK && match:
		return []interface{}{in.Value}
	case !out.OK && !match:
		return []interface{}{state}
	}
	return nil
}

// Check checks a history, giving up after timeout (Unknown).
func Check(h []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(Model.ToModel(), h, timeout)
}
