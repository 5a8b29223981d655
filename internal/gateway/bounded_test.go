package gateway

import (
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication"
)

// TestBoundedLocal checks the rule by which a replica serves a
// bounded-staleness read without its leader: within the operations bound
// counted at MaxCommandsPerEntry per entry, synced recently enough (at
// most min(maxSilence, T/silenceShare) ago), or quiesced with nothing to
// apply on a marker at most T/quiesceShare old; everything else goes to
// the leader.
func TestBoundedLocal(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const k = 100_000
	const tt = 5 * time.Minute
	perEntry := uint64(engine.MaxCommandsPerEntry)
	entries := uint64(k) / perEntry // the most entries within k operations
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	cases := []struct {
		name   string
		lag    replication.LagInfo
		maxOps int64
		maxAge time.Duration
		want   bool
	}{
		{"caught up, just synced", replication.LagInfo{Commit: 50, Applied: 50, Synced: now}, k, tt, true},
		{"caught up, synced within the silence cap", replication.LagInfo{Commit: 50, Applied: 50, Synced: ago(maxSilence)}, k, tt, true},
		{"caught up, synced past the silence cap", replication.LagInfo{Commit: 50, Applied: 50, Synced: ago(maxSilence + time.Millisecond)}, k, tt, false},
		{"never synced", replication.LagInfo{Commit: 50, Applied: 50}, k, tt, false},
		{"synced in the future", replication.LagInfo{Commit: 50, Applied: 50, Synced: now.Add(time.Second)}, k, tt, false},
		{"heard recently but never synced", replication.LagInfo{Commit: 50, Applied: 50, LeaderHeard: now}, k, tt, false},
		{"behind within the bound", replication.LagInfo{Commit: 10 + entries, Applied: 10, Synced: now}, k, tt, true},
		{"behind past the bound", replication.LagInfo{Commit: 11 + entries, Applied: 10, Synced: now}, k, tt, false},
		{"one entry past a small bound", replication.LagInfo{Commit: 11, Applied: 10, Synced: now}, 10, tt, false},
		{"caught up under a small bound", replication.LagInfo{Commit: 10, Applied: 10, Synced: now}, 10, tt, true},
		{"applied past the known commit", replication.LagInfo{Commit: 9, Applied: 10, Synced: now}, 10, tt, true},
		{"a short interval shrinks the silence", replication.LagInfo{Commit: 5, Applied: 5, Synced: ago(200 * time.Millisecond)}, k, tt / 400, false},
		{"a short interval, synced within its share", replication.LagInfo{Commit: 5, Applied: 5, Synced: ago(tt / 400 / silenceShare)}, k, tt / 400, true},
		{"quiesced, nothing to apply, synced long ago", replication.LagInfo{Commit: 7, Applied: 7, Quiesced: true, QuiescedAt: ago(tt / quiesceShare), Synced: ago(tt / quiesceShare)}, k, tt, true},
		{"quiesced, nothing to apply, under a small prefix", replication.LagInfo{Commit: 7, Applied: 7, Quiesced: true, QuiescedAt: ago(time.Minute)}, 10, tt, true},
		{"quiesced too long ago", replication.LagInfo{Commit: 7, Applied: 7, Quiesced: true, QuiescedAt: ago(tt/quiesceShare + time.Millisecond)}, k, tt, false},
		{"quiesced, no marker time", replication.LagInfo{Commit: 7, Applied: 7, Quiesced: true}, k, tt, false},
		{"quiesced in the future", replication.LagInfo{Commit: 7, Applied: 7, Quiesced: true, QuiescedAt: now.Add(time.Second)}, k, tt, false},
		{"quiesced with entries to apply", replication.LagInfo{Commit: 8, Applied: 7, Quiesced: true, QuiescedAt: now, Synced: ago(time.Hour)}, k, tt, false},
		{"leader, applied all", replication.LagInfo{Leader: true, Commit: 7, Applied: 7, Synced: now, LeaderHeard: now}, k, tt, true},
		{"leader, not confirmed for a while (paused or cut off)", replication.LagInfo{Leader: true, Commit: 7, Applied: 7, Synced: ago(12 * time.Second), LeaderHeard: now}, k, tt, false},
		{"leader, never confirmed", replication.LagInfo{Leader: true, Commit: 7, Applied: 7, LeaderHeard: now}, k, tt, false},
		{"no bounds", replication.LagInfo{Commit: 7, Applied: 7, Synced: now}, 0, 0, false},
		{"negative prefix", replication.LagInfo{Commit: 7, Applied: 7, Synced: now}, -1, tt, false},
	}
	for _, c := range cases {
		if got := boundedLocal(c.lag, now, c.maxOps, c.maxAge); got != c.want {
			t.Errorf("%s: boundedLocal(%+v, maxOps %d, maxAge %v) = %v, want %v", c.name, c.lag, c.maxOps, c.maxAge, got, c.want)
		}
	}
}
