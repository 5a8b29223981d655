package throughput

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

// BurstConfig is the burst-capacity policy of a Bucket. Cosmos DB's values
// (learn.microsoft.com/azure/cosmos-db/burst-capacity) are DefaultBurst().
type BurstConfig struct {
	// Bank is how much idle time a partition can bank: the bank holds at
	// most Bank × rate RU. Zero disables burst capacity.
	Bank time.Duration
	// MaxRate is the ceiling, in RU/s, on a bursting partition's total
	// consumption (base rate plus bank spending). Partitions whose rate is
	// MaxRate or more get no burst capacity.
	MaxRate float64
}

// DefaultBurst is Cosmos DB's burst capacity: 5 minutes of idle capacity,
// spent at up to 3,000 RU/s, for partitions below 3,000 RU/s.
func DefaultBurst() BurstConfig { return BurstConfig{Bank: 5 * time.Minute, MaxRate: 3000} }

// A Bucket is the request-unit budget of one physical partition: a token
// bucket refilled at the partition's rate, plus Cosmos DB's burst capacity.
//
// The base balance holds at most one second of rate and starts full. Requests
// are admitted while it is positive; each is charged after it ran, and the
// balance may go negative (debt, repaid by refill before anything else is
// admitted). Refill that arrives while the base balance is full is banked, up
// to BurstConfig.Bank of rate; the bank starts empty. When the base balance is
// exhausted, requests are admitted on the bank, and their charges drawn from
// it, at up to BurstConfig.MaxRate − rate RU/s (a second allowance, refilled
// at that rate and holding at most one second of it, paces the spending).
//
// Amounts are kept as integer micro-RU and refill carries its remainder, so a
// bucket's state depends only on the calls made and their times, not on how
// often it is consulted in between: ten Admit calls 100 ms apart refill
// exactly what one call a second later does.
//
// A Bucket does no I/O and reads no clock: every time is passed in. Times
// earlier than the latest one seen are treated as that time. A Bucket is not
// safe for concurrent use; callers lock.
type Bucket struct {
	rate    int64 // base refill, µRU per second; also the base balance's cap (1 s)
	burst   int64 // bank spending allowance, µRU per second (0: no burst capacity)
	bal     int64 // base balance, ≤ rate; negative is debt
	bank    int64 // banked idle capacity, ≤ bankCap
	bankCap int64 // Bank × rate, 0 without burst capacity
	credit  int64 // bank spending allowance, ≤ burst (1 s); negative after a large burst charge
	frac    uint64
	cfrac   uint64 // refill remainders of bal and credit, in 1e-9 µRU
	last    time.Time
	bankDur time.Duration
	maxRate int64 // BurstConfig.MaxRate in µRU per second
}

// BucketState is a Bucket's state at some time, in RU, for telemetry.
type BucketState struct {
	Rate    float64 // RU/s
	Balance float64 // base balance; negative is debt
	Bank    float64 // banked burst capacity
}

func (s BucketState) String() string {
	return fmt.Sprintf("rate=%g balance=%.6f bank=%.6f", s.Rate, s.Balance, s.Bank)
}

const (
	micro = 1e6 // µRU per RU
	// maxAmount bounds every amount so that sums of two never overflow.
	maxAmount = 1 << 61
	// zeroRateRetry is the retry-after a bucket without budget answers: its
	// rate may be raised at any time.
	zeroRateRetry = time.Second
	maxRetry      = time.Duration(1 << 62)
)

// toMicro converts RU (or RU/s) to µRU, rounding, clamped to [0, maxAmount].
func toMicro(ru float64) int64 {
	switch {
	case !(ru > 0): // also NaN
		return 0
	case ru*micro >= maxAmount:
		return maxAmount
	}
	return int64(math.Round(ru * micro))
}

// NewBucket returns the bucket of a partition of rate RU/s with Cosmos DB's
// burst capacity (DefaultBurst), full at time now.
func NewBucket(rate float64, now time.Time) *Bucket {
	return NewBucketBurst(rate, now, DefaultBurst())
}

// NewBucketBurst is NewBucket with the given burst policy. A rate that is not
// positive (or NaN) is a bucket with no budget: it admits nothing until
// SetRate raises it.
func NewBucketBurst(rate float64, now time.Time, cfg BurstConfig) *Bucket {
	b := &Bucket{last: now, bankDur: max(cfg.Bank, 0), maxRate: toMicro(cfg.MaxRate)}
	b.setRate(rate)
	b.bal = b.rate
	b.credit = b.burst
	return b
}

// setRate installs rate and clamps the balances to the new caps.
func (b *Bucket) setRate(rate float64) {
	b.rate = toMicro(rate)
	b.burst, b.bankCap = 0, 0
	if b.bankDur > 0 && b.rate < b.maxRate {
		b.burst = b.maxRate - b.rate
		var f uint64
		b.bankCap = refill(b.rate, b.bankDur, &f)
	}
	b.bal = min(b.bal, b.rate)
	b.bank = min(b.bank, b.bankCap)
	b.credit = min(b.credit, b.burst)
}

// SetRate changes the partition's rate at time now: refill up to now runs at
// the old rate. Balances above the new caps are cut to them; a partition
// whose new rate gets no burst capacity loses its bank.
func (b *Bucket) SetRate(rate float64, now time.Time) {
	b.advance(now)
	b.setRate(rate)
}

// refill returns floor((rate × dt + *frac) / 1e9), the µRU that rate (µRU/s)
// refills in dt, and keeps the remainder in *frac. It saturates at maxAmount.
func refill(rate int64, dt time.Duration, frac *uint64) int64 {
	hi, lo := bits.Mul64(uint64(rate), uint64(dt))
	lo, carry := bits.Add64(lo, *frac, 0)
	hi += carry
	if hi >= 1e9 {
		*frac = 0
		return maxAmount
	}
	q, r := bits.Div64(hi, lo, 1e9)
	*frac = r
	if q >= maxAmount {
		return maxAmount
	}
	return int64(q)
}

// advance refills the bucket up to now.
func (b *Bucket) advance(now time.Time) {
	dt := now.Sub(b.last)
	if dt <= 0 {
		return
	}
	b.last = now
	add := refill(b.rate, dt, &b.frac)
	if room := b.rate - b.bal; add > room {
		b.bal = b.rate
		b.bank = min(b.bankCap, b.bank+add-room) // idle capacity: the base is full
	} else {
		b.bal += add
	}
	if b.burst > 0 {
		b.credit = min(b.burst, b.credit+refill(b.burst, dt, &b.cfrac))
	}
}

// canBurst reports whether a request may be admitted on the bank.
func (b *Bucket) canBurst() bool { return b.burst > 0 && b.bank > 0 && b.credit > 0 }

// Admit reports whether the partition may start a request at time now: its
// base balance is positive, or it has banked capacity and may spend it at
// this moment. When not, retryAfter is the shortest whole number of
// milliseconds after which Admit would answer ok if nothing is charged
// meanwhile (at least 1 ms; 1 s for a bucket with no budget).
func (b *Bucket) Admit(now time.Time) (ok bool, retryAfter time.Duration) {
	b.advance(now)
	if b.bal > 0 || b.canBurst() {
		return true, 0
	}
	if b.rate == 0 { // no budget, and so no bank either
		return false, zeroRateRetry
	}
	// While the base balance is not full, refill goes to it and the bank
	// stays as it is; so the wait is until the base balance or, with a bank,
	// the spending allowance is positive, whichever comes first.
	wait := untilPositive(b.bal, b.rate, b.frac)
	if b.burst > 0 && b.bank > 0 {
		wait = min(wait, untilPositive(b.credit, b.burst, b.cfrac))
	}
	if wait >= maxRetry-time.Millisecond {
		return false, maxRetry.Truncate(time.Millisecond)
	}
	ms := (wait + time.Millisecond - 1).Truncate(time.Millisecond)
	return false, max(ms, time.Millisecond)
}

// untilPositive returns the least dt after which an amount x ≤ 0 refilled at
// rate µRU/s (with remainder frac) is positive: the least dt with
// floor((rate × dt + frac) / 1e9) ≥ 1 − x.
func untilPositive(x, rate int64, frac uint64) time.Duration {
	if rate <= 0 {
		return maxRetry
	}
	hi, lo := bits.Mul64(uint64(1-x), 1e9)
	lo, borrow := bits.Sub64(lo, frac, 0)
	hi -= borrow
	if hi >= uint64(rate) {
		return maxRetry
	}
	q, r := bits.Div64(hi, lo, uint64(rate))
	if r != 0 {
		q++
	}
	return time.Duration(min(q, uint64(maxRetry)))
}

// Charge consumes ru at time now, after the request it pays for ran. It is
// drawn from the positive base balance first; what that does not cover comes
// from the bank if the bucket may burst now (the spending allowance may go
// negative), and the rest becomes base debt. A negative or NaN ru counts as 0.
func (b *Bucket) Charge(now time.Time, ru float64) {
	b.advance(now)
	x := toMicro(ru)
	if b.bal > 0 {
		t := min(x, b.bal)
		b.bal -= t
		x -= t
	}
	if x > 0 && b.canBurst() {
		t := min(x, b.bank)
		b.bank -= t
		b.credit = max(b.credit-t, -maxAmount)
		x -= t
	}
	b.bal = max(b.bal-x, -maxAmount)
}

// Snapshot returns the bucket's state at time now (refilled up to now).
func (b *Bucket) Snapshot(now time.Time) BucketState {
	b.advance(now)
	return BucketState{Rate: float64(b.rate) / micro, Balance: float64(b.bal) / micro, Bank: float64(b.bank) / micro}
}
