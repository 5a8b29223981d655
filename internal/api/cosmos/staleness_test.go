package cosmos

import (
	"testing"
	"time"
)

// TestStalenessBounds checks that a bounded read under an account of
// another level takes the default bounds, and under a bounded account its
// own.
func TestStalenessBounds(t *testing.T) {
	s := &Server{cfg: Config{Consistency: ConsistencyPolicy{Level: "Strong"}}}
	if k, tt := s.stalenessBounds(); k != DefaultMaxStalenessPrefix || tt != DefaultMaxStalenessInterval {
		t.Fatalf("strong account: bounds %d, %v; want the defaults", k, tt)
	}
	s.cfg.Consistency = ConsistencyPolicy{Level: "BoundedStaleness", MaxStalenessPrefix: 20, MaxStalenessInterval: 7 * time.Second}
	if k, tt := s.stalenessBounds(); k != 20 || tt != 7*time.Second {
		t.Fatalf("bounded account: bounds %d, %v; want 20, 7s", k, tt)
	}
}
