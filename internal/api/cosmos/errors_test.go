package cosmos

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/engine"
)

// TestOperationStatus pins the status and substatus of every outcome an
// item operation can have: a failure's from its sentinel (wrapped with a
// message, as the engine does), a success's from its kind and whether it
// created the item.
func TestOperationStatus(t *testing.T) {
	fail := func(sentinel error, status, sub int) {
		t.Helper()
		err := fmt.Errorf("%w: what went wrong", sentinel)
		if gotStatus, gotSub, _ := statusOf(err); gotStatus != status || gotSub != sub {
			t.Errorf("%v: status %d substatus %d, want %d %d", sentinel, gotStatus, gotSub, status, sub)
		}
	}
	fail(engine.ErrBadRequest, 400, 0)
	fail(engine.ErrPartitionKeyMismatch, 400, 1001)
	fail(engine.ErrNotFound, 404, 0)
	fail(engine.ErrConflict, 409, 0)
	fail(engine.ErrPreconditionFailed, 412, 0)
	fail(engine.ErrTooLarge, 413, 0)
	fail(engine.ErrLogicalPartitionFull, 403, 1014)
	fail(engine.ErrFailedDependency, 424, 0)
	fail(engine.ErrPartitionGone, 410, 1002)
	fail(engine.ErrUnavailable, 503, 0)
	fail(engine.ErrNotLeader, 503, 0)
	fail(engine.ErrOutcomeUnknown, 503, 0)
	fail(engine.ErrCorrupt, 500, 0)
	fail(engine.ErrInternal, 500, 0)
	fail(errors.New("no sentinel"), 500, 0)

	ok := func(kind engine.OpKind, created bool, want int) {
		t.Helper()
		if got := successStatus(kind, created); got != want {
			t.Errorf("%v (created %v): status %d, want %d", kind, created, got, want)
		}
	}
	ok(engine.OpCreate, true, 201)
	ok(engine.OpUpsert, true, 201)
	ok(engine.OpUpsert, false, 200)
	ok(engine.OpReplace, false, 200)
	ok(engine.OpPatch, false, 200)
	ok(engine.OpRead, false, 200)
	ok(engine.OpDelete, false, 204)
}

// TestCorruptIsInternalServerError pins the answer to damaged stored data: a
// 500 whose code is InternalServerError and whose message says the storage
// is damaged and what.
func TestCorruptIsInternalServerError(t *testing.T) {
	err := fmt.Errorf("%w: item \"1\" has a value of unknown format 0xff", engine.ErrCorrupt)
	if status, sub, code := statusOf(err); status != 500 || sub != 0 || code != "InternalServerError" {
		t.Errorf("statusOf: %d %d %s, want 500 0 InternalServerError", status, sub, code)
	}
	if got, want := messageOf(err), `stored data is damaged: item "1" has a value of unknown format 0xff`; got != want {
		t.Errorf("messageOf: %q, want %q", got, want)
	}
}
