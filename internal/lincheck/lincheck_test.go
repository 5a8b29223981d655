package lincheck

import (
	"math"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func op(client int, in Input, call, ret int64, out Output) porcupine.Operation {
	if out.Unknown {
		ret = math.MaxInt64
	}
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

func w(k, v string) Input      { return Input{Key: k, Kind: Write, Value: v} }
func r(k string) Input         { return Input{Key: k, Kind: Read} }
func cas(k, e, v string) Input { return Input{Key: k, Kind: CAS, Expect: e, Value: v} }
func val(v string) Output      { return Output{Value: v} }
func ok(b bool) Output         { return Output{OK: b} }
func unknown() Output          { return Output{Unknown: true} }

// TestModel checks the checker against hand-made histories, each either
// linearizable or not, by construction.
func TestModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"a read of a completed write", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(1, r("a"), 20, 30, val("1"))}, porcupine.Ok},
		{"a stale read after a completed write", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(0, w("a", "2"), 11, 15, ok(true)), op(1, r("a"), 20, 30, val("1"))}, porcupine.Illegal},
		{"a read concurrent with a write sees either", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(0, w("a", "2"), 11, 40, ok(true)), op(1, r("a"), 20, 30, val("1")), op(2, r("a"), 20, 30, val("2"))}, porcupine.Ok},
		{"reads that disagree on the order", []porcupine.Operation{
			op(0, w("a", "1"), 0, 100, ok(true)), op(1, w("a", "2"), 0, 100, ok(true)),
			op(2, r("a"), 10, 20, val("1")), op(2, r("a"), 30, 40, val("2")), op(3, r("a"), 50, 60, val("1")), op(3, r("a"), 61, 70, val("2"))}, porcupine.Illegal},
		{"two compare-and-sets from one value both succeed", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(1, cas("a", "1", "2"), 20, 30, ok(true)), op(2, cas("a", "1", "3"), 20, 30, ok(true))}, porcupine.Illegal},
		{"one compare-and-set wins, the other fails", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(1, cas("a", "1", "2"), 20, 30, ok(true)), op(2, cas("a", "1", "3"), 20, 30, ok(false)), op(0, r("a"), 40, 50, val("2"))}, porcupine.Ok},
		{"a compare-and-set that fails on its expected value", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(1, cas("a", "1", "2"), 20, 30, ok(false))}, porcupine.Illegal},
		{"a write of unknown outcome that took effect", []porcupine.Operation{
			op(0, w("a", "1"), 0, 0, unknown()), op(1, r("a"), 50, 60, val("1"))}, porcupine.Ok},
		{"a write of unknown outcome that did not", []porcupine.Operation{
			op(0, w("a", "1"), 0, 0, unknown()), op(1, r("a"), 50, 60, val(""))}, porcupine.Ok},
		{"a write of unknown outcome seen, then unseen", []porcupine.Operation{
			op(0, w("a", "1"), 0, 0, unknown()), op(1, r("a"), 50, 60, val("1")), op(1, r("a"), 70, 80, val(""))}, porcupine.Illegal},
		{"keys are independent", []porcupine.Operation{
			op(0, w("a", "1"), 0, 10, ok(true)), op(1, r("b"), 20, 30, val("")), op(1, r("a"), 20, 30, val("1"))}, porcupine.Ok},
		{"a lost write", []porcupine.Operation{
			op(0, w("b", "1"), 0, 10, ok(true)), op(1, r("b"), 20, 30, val(""))}, porcupine.Illegal},
	} {
		if got := Check(tc.h, 10*time.Second); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestRecorder checks that recorded operations keep their order in time
// and that an unknown outcome is open-ended.
func TestRecorder(t *testing.T) {
	rec := NewRecorder()
	c := rec.Now()
	rec.Add(0, w("a", "1"), c, ok(true))
	rec.Add(1, w("a", "2"), rec.Now(), unknown())
	h := rec.History()
	if len(h) != 2 || rec.Len() != 2 || rec.Known() != 1 || h[0].Return < h[0].Call || h[1].Return != math.MaxInt64 {
		t.Fatalf("history %+v", h)
	}
	if rec.Await(1, 10*time.Millisecond) || !rec.Await(0, time.Millisecond) {
		t.Fatal("Await reported operations that were not recorded")
	}
	if got := Check(append(h, op(2, r("a"), h[0].Return+1, h[0].Return+2, val("3"))), time.Second); got != porcupine.Illegal {
		t.Fatalf("a read of a value never written: %s", got)
	}
}
