package cosmos

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Consistency levels. The account has a default level, reported in its
// userConsistencyPolicy, which the SDKs read at start; a request may ask
// for a weaker level in x-ms-consistency-level, never a stronger one (the
// service answers 400). One replica serves every read of a partition, so
// each level's guarantee holds; with replicas a weaker level lets a
// follower serve the read.

// ConsistencyLevels are the service's level names, strongest first.
var ConsistencyLevels = []string{"Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual"}

// consistencyFlags are the short names the serve command takes, in the
// order of ConsistencyLevels.
var consistencyFlags = []string{"strong", "bounded", "session", "prefix", "eventual"}

// ConsistencyPolicy is the account's default consistency.
type ConsistencyPolicy struct {
	// Level is one of ConsistencyLevels; empty means Session, the
	// service's default.
	Level string
	// MaxStalenessPrefix and MaxStalenessInterval bound how far a read may
	// lag under BoundedStaleness: operations, and time.
	MaxStalenessPrefix   int64
	MaxStalenessInterval time.Duration
}

// Bounds of bounded staleness, as the service takes them for one region,
// and the defaults.
const (
	MinStalenessPrefix          = 10
	MaxStalenessPrefix          = 2147483647
	MinStalenessInterval        = 5 * time.Second
	MaxStalenessInterval        = 24 * time.Hour
	DefaultMaxStalenessPrefix   = 100_000
	DefaultMaxStalenessInterval = 5 * time.Minute
)

// ParseConsistency reads a level by its short name (strong, bounded,
// session, prefix, eventual) or its service name, in any case.
func ParseConsistency(s string) (string, error) {
	for i, l := range ConsistencyLevels {
		if strings.EqualFold(s, l) || strings.EqualFold(s, consistencyFlags[i]) {
			return l, nil
		}
	}
	return "", fmt.Errorf("unknown consistency level %q: use one of %s", s, strings.Join(consistencyFlags, ", "))
}

// Normalize fills the defaults and checks the bounds.
func (p *ConsistencyPolicy) Normalize() error {
	if p.Level == "" {
		p.Level = "Session"
	}
	l, err := ParseConsistency(p.Level)
	if err != nil {
		return err
	}
	p.Level = l
	if l != "BoundedStaleness" {
		if p.MaxStalenessPrefix != 0 || p.MaxStalenessInterval != 0 {
			return fmt.Errorf("a maximum staleness applies to the bounded staleness level only, not to %s", l)
		}
		return nil
	}
	if p.MaxStalenessPrefix == 0 {
		p.MaxStalenessPrefix = DefaultMaxStalenessPrefix
	}
	if p.MaxStalenessInterval == 0 {
		p.MaxStalenessInterval = DefaultMaxStalenessInterval
	}
	if p.MaxStalenessPrefix < MinStalenessPrefix || p.MaxStalenessPrefix > MaxStalenessPrefix {
		return fmt.Errorf("the maximum staleness prefix must be between %d and %d operations, not %d", MinStalenessPrefix, MaxStalenessPrefix, p.MaxStalenessPrefix)
	}
	if p.MaxStalenessInterval < MinStalenessInterval || p.MaxStalenessInterval > MaxStalenessInterval || p.MaxStalenessInterval%time.Second != 0 {
		return fmt.Errorf("the maximum staleness interval must be whole seconds between %v and %v, not %v", MinStalenessInterval, MaxStalenessInterval, p.MaxStalenessInterval)
	}
	return nil
}

// account returns the policy as the account resource reports it.
func (p *ConsistencyPolicy) account() map[string]any {
	out := map[string]any{"defaultConsistencyLevel": p.Level}
	if p.Level == "BoundedStaleness" {
		out["maxStalenessPrefix"] = p.MaxStalenessPrefix
		out["maxIntervalInSeconds"] = int64(p.MaxStalenessInterval / time.Second)
	}
	return out
}

func levelRank(l string) int {
	for i, x := range ConsistencyLevels {
		if strings.EqualFold(l, x) {
			return i
		}
	}
	return -1
}

// checkConsistency refuses a request's consistency level that is unknown
// or stronger than the account's.
func (p *ConsistencyPolicy) checkConsistency(h http.Header) error {
	v := h.Get(hConsistencyLevel)
	if v == "" {
		return nil
	}
	r := levelRank(v)
	if r < 0 {
		return errBadRequest("Invalid value %q for header %s: use one of %s", v, hConsistencyLevel, strings.Join(ConsistencyLevels, ", "))
	}
	if r < levelRank(p.Level) {
		return errBadRequest("ConsistencyLevel %s specified in the request is invalid when service is configured with consistency level %s. Ensure the request consistency level is not stronger than the service consistency level.", ConsistencyLevels[r], p.Level)
	}
	return nil
}
