package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/replication"
)

// TestProposalErrorsNamed checks that a failed proposal's error says what
// it means, keeps the log's cause, and still matches ErrUnavailable, which
// the API layers render as 503 (as they did before the kinds were named).
func TestProposalErrorsNamed(t *testing.T) {
	nl := &replication.NotLeaderError{Group: 7, Node: 2, Leader: 3}
	never := fmt.Errorf("%w: %w", errNeverCommitted, nl)
	unsettled := fmt.Errorf("%w (and it could not be settled: no leader)", replication.ErrAmbiguous)
	cases := []struct {
		cause      error
		want, not  error
		leaderHint bool
	}{
		{nl, ErrNotLeader, ErrOutcomeUnknown, true},
		{never, ErrNotLeader, ErrOutcomeUnknown, true},
		{unsettled, ErrOutcomeUnknown, ErrNotLeader, false},
		{fmt.Errorf("wait: %w", replication.ErrTimeout), ErrOutcomeUnknown, ErrNotLeader, false},
		{replication.ErrStopped, ErrOutcomeUnknown, ErrNotLeader, false},
		{replication.ErrBusy, ErrUnavailable, ErrNotLeader, false},
	}
	for _, c := range cases {
		err := proposalError("the write", c.cause)
		if !errors.Is(err, c.want) || errors.Is(err, c.not) || !errors.Is(err, ErrUnavailable) || !errors.Is(err, c.cause) {
			t.Errorf("%v: got %v, want %v and ErrUnavailable, not %v, wrapping its cause", c.cause, err, c.want, c.not)
		}
		var got *replication.NotLeaderError
		if errors.As(err, &got) != c.leaderHint || (c.leaderHint && got.Leader != 3) {
			t.Errorf("%v: the leader hint is %v", err, got)
		}
	}
	if errors.Is(ErrUnavailable, ErrNotLeader) || errors.Is(ErrNotLeader, ErrOutcomeUnknown) {
		t.Error("the kinds of unavailability are not distinct")
	}
}
