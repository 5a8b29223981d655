package gateway

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
)

// TestWireRoundTrip checks that a reply keeps what the APIs read of it:
// each result's document, etag, charge and creation, each error's
// sentinel and message, a refusal's leader and a throttling's retry time.
func TestWireRoundTrip(t *testing.T) {
	nl := &replication.NotLeaderError{Group: 7, Node: 1, Leader: 3}
	in := reply{
		session: engine.Session{RangeID: "0", LSN: 42},
		res: []engine.OpResult{
			{Created: true, Doc: []byte(`{"id":"a"}`), Etag: `"e1"`, Charge: 6.29},
			{Err: fmt.Errorf("%w: item b exists", engine.ErrConflict), Charge: 1},
			{Err: fmt.Errorf("%w: the other failed", engine.ErrFailedDependency)},
		},
		err: fmt.Errorf("%w: refused: %w", engine.ErrNotLeader, nl),
	}
	out, err := decodeReply(encodeReply(in))
	if err != nil {
		t.Fatal(err)
	}
	if out.session != in.session || len(out.res) != 3 {
		t.Fatalf("got %+v", out)
	}
	r := out.res[0]
	if !r.Created || string(r.Doc) != `{"id":"a"}` || r.Etag != `"e1"` || r.Charge != 6.29 || r.Err != nil {
		t.Fatalf("result 0: %+v", r)
	}
	if !errors.Is(out.res[1].Err, engine.ErrConflict) || out.res[1].Err.Error() != in.res[1].Err.Error() || out.res[1].Doc != nil {
		t.Fatalf("result 1: %+v", out.res[1])
	}
	if !errors.Is(out.res[2].Err, engine.ErrFailedDependency) {
		t.Fatalf("result 2: %+v", out.res[2])
	}
	var got *replication.NotLeaderError
	if !errors.Is(out.err, engine.ErrNotLeader) || !errors.Is(out.err, engine.ErrUnavailable) || !errors.As(out.err, &got) || got.Leader != 3 || got.Group != 7 {
		t.Fatalf("error %v", out.err)
	}
	te := &engine.ThrottledError{RetryAfter: 250 * time.Millisecond, RangeID: "1", RUs: 400}
	out, err = decodeReply(encodeReply(reply{err: te}))
	var gotTE *engine.ThrottledError
	if err != nil || !errors.Is(out.err, engine.ErrThrottled) || !errors.As(out.err, &gotTE) || gotTE.RetryAfter != te.RetryAfter || gotTE.RangeID != "1" {
		t.Fatalf("throttled: %v, %v", err, out.err)
	}
	// An error of no sentinel travels as an internal error.
	out, _ = decodeReply(encodeReply(reply{err: errors.New("odd")}))
	if !errors.Is(out.err, engine.ErrInternal) || out.err.Error() != "odd" {
		t.Fatalf("odd error: %v", out.err)
	}
}

// TestWireMalformed checks that every truncation of a request and a reply,
// and garbage, fail with an error rather than a panic.
func TestWireMalformed(t *testing.T) {
	req := encodeRequest(request{hops: 1, db: "db", coll: "c", rid: "r", rangeID: "0", cmd: []byte{1, 2, 3}})
	if r, err := decodeRequest(req); err != nil || r.db != "db" || r.coll != "c" || r.rid != "r" || r.rangeID != "0" || r.hops != 1 || string(r.cmd) != "\x01\x02\x03" {
		t.Fatalf("request round trip: %+v, %v", r, err)
	}
	for i := range len(req) {
		if _, err := decodeRequest(req[:i]); err == nil {
			t.Fatalf("request truncated to %d bytes decoded", i)
		}
	}
	if _, err := decodeRequest(encodeRequest(request{hops: maxHops + 1})); err == nil {
		t.Fatal("a request past maxHops decoded")
	}
	rep := encodeReply(reply{session: engine.Session{RangeID: "0", LSN: 1}, res: []engine.OpResult{{Doc: []byte("{}"), Err: fmt.Errorf("%w: x", engine.ErrNotFound)}}})
	for i := range len(rep) {
		if _, err := decodeReply(rep[:i]); err == nil {
			t.Fatalf("reply truncated to %d bytes decoded", i)
		}
	}
	if _, err := decodeReply(append(rep, 0)); err == nil {
		t.Fatal("a reply with trailing bytes decoded")
	}
	if _, err := decodeReply([]byte{wireVersion, 99}); err == nil {
		t.Fatal("an unknown error kind decoded")
	}
}
