package throughput

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// offer runs a client that tries a request of ru RU every step from start for
// d, charging admitted ones, and returns how many of how many were admitted.
func offer(b *Bucket, start time.Time, d, step time.Duration, ru float64) (admitted, tried int) {
	for at := time.Duration(0); at < d; at += step {
		tried++
		if ok, _ := b.Admit(start.Add(at)); ok {
			b.Charge(start.Add(at), ru)
			admitted++
		}
	}
	return admitted, tried
}

func TestBucketSteadyAtRateNeverThrottles(t *testing.T) {
	f := func(rate, ru float64, cfg BurstConfig) {
		t.Helper()
		b := NewBucketBurst(rate, t0, cfg)
		step := time.Duration(ru / rate * float64(time.Second))
		if a, n := offer(b, t0, 100*time.Second, step, ru); a != n {
			t.Errorf("rate %v, %v RU every %v: %d of %d admitted", rate, ru, step, a, n)
		}
	}
	f(1000, 10, DefaultBurst())
	f(1000, 10, BurstConfig{})
	f(400, 5.75, DefaultBurst())
	f(400.0/3, 5, DefaultBurst()) // 37.5 ms apart, a rate that is not a whole number of µRU/s
	f(10000, 1, DefaultBurst())
}

func TestBucketTwiceTheRateAdmitsHalf(t *testing.T) {
	f := func(rate float64) {
		t.Helper()
		b := NewBucket(rate, t0)
		ru := rate / 50 // offered at 100 requests/s = 2 × rate
		a, n := offer(b, t0, 60*time.Second, 10*time.Millisecond, ru)
		// The full bucket (1 s of rate) admits 50 extra requests, then half.
		if want := float64(n)/2 + 50; math.Abs(float64(a)-want) > 2 {
			t.Errorf("rate %v at 2×: %d of %d admitted, want about %v", rate, a, n, want)
		}
		if s := b.Snapshot(t0.Add(60 * time.Second)); s.Bank != 0 {
			t.Errorf("rate %v: busy partition banked %v RU", rate, s.Bank)
		}
	}
	f(1000)
	f(5000)
}

func TestBucketRetryAfterIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfgs := []BurstConfig{{}, DefaultBurst(), {Bank: 10 * time.Second, MaxRate: 1500}}
	refused := 0
	for i := 0; i < 20000; i++ {
		rate := []float64{1, 100, 400.0 / 3, 1000, 2999, 4000, 10000}[rng.IntN(7)]
		b := NewBucketBurst(rate, t0, cfgs[rng.IntN(len(cfgs))])
		now := t0
		for k := rng.IntN(6); k >= 0; k-- {
			now = now.Add(time.Duration(rng.Int64N(int64(2 * time.Second))))
			if rng.IntN(3) == 0 {
				now = now.Add(time.Duration(rng.Int64N(int64(20 * time.Second)))) // idle: fills the bank
			}
			b.Charge(now, rng.Float64()*3*rate)
		}
		before := *b
		ok, retry := b.Admit(now)
		if ok {
			continue
		}
		refused++
		if retry < time.Millisecond || retry%time.Millisecond != 0 {
			t.Fatalf("retryAfter %v is not a positive whole number of ms", retry)
		}
		later := *b
		if ok, _ := later.Admit(now.Add(retry)); !ok {
			t.Fatalf("%+v: retryAfter %v, but not admitted then", before, retry)
		}
		if retry > time.Millisecond {
			earlier := *b
			if ok, _ := earlier.Admit(now.Add(retry - time.Millisecond)); ok {
				t.Fatalf("%+v: retryAfter %v, but admitted 1 ms earlier", before, retry)
			}
		}
	}
	if refused < 5000 {
		t.Fatalf("only %d of 20000 random buckets refused: the test checks too little", refused)
	}
	// A worked case: 500 RU of debt at 1000 RU/s is repaid after 500 ms and
	// the balance is positive 1 µs of refill later, so 501 ms.
	b := NewBucketBurst(1000, t0, BurstConfig{})
	b.Charge(t0, 1500)
	if ok, retry := b.Admit(t0); ok || retry != 501*time.Millisecond {
		t.Errorf("after 1500 RU at 1000 RU/s: ok %v, retry %v; want false, 501ms", ok, retry)
	}
	if ok, retry := b.Admit(t0.Add(500 * time.Millisecond)); ok || retry != time.Millisecond {
		t.Errorf("at 500 ms: ok %v, retry %v; want false, 1ms", ok, retry)
	}
}

func TestBucketBurst(t *testing.T) {
	b := NewBucket(100, t0)
	if s := b.Snapshot(t0); s.Bank != 0 || s.Balance != 100 {
		t.Fatalf("new bucket %v, want full balance and an empty bank", s)
	}
	// Busy at exactly the rate: the base never overflows, nothing is banked.
	now := t0
	for i := 0; i < 600; i++ {
		if ok, _ := b.Admit(now); !ok {
			t.Fatalf("throttled at the rate after %v", now.Sub(t0))
		}
		b.Charge(now, 10)
		now = now.Add(100 * time.Millisecond)
	}
	now = now.Add(-100 * time.Millisecond)
	if s := b.Snapshot(now); s.Bank != 0 || s.Balance != 90 {
		t.Fatalf("after a minute at the rate: %v, want balance 90, bank 0", s)
	}
	// Idle: the base refills first, then the rest is banked.
	now = now.Add(10 * time.Second)
	if s := b.Snapshot(now); s.Bank != 990 || s.Balance != 100 {
		t.Fatalf("after 10 s idle: %v, want balance 100, bank 990", s)
	}
	now = now.Add(time.Hour)
	if s := b.Snapshot(now); s.Bank != 300*100 {
		t.Fatalf("after an hour idle: %v, want bank capped at 300 s × 100 RU/s", s)
	}
	// A greedy client: every millisecond, as many 10 RU requests as admitted.
	start := now
	perSecond := make([]float64, 30)
	for tick := 0; tick < 30000; tick++ {
		at := start.Add(ms(tick))
		for {
			ok, _ := b.Admit(at)
			if !ok {
				break
			}
			b.Charge(at, 10)
			perSecond[tick/1000] += 10
		}
	}
	total := 0.0
	for s, ru := range perSecond {
		total += ru
		limit := 3000.0 + 10 // one request may overshoot
		if s == 0 {
			limit += 100 + 2900 // the full base and a full spending allowance
		}
		if ru > limit {
			t.Errorf("second %d: consumed %v RU, over the 3,000 RU/s burst ceiling", s, ru)
		}
		// The bank (30,000 RU) pays 2,900 RU/s on top of the base, and twice
		// that in the first second, when the spending allowance starts full:
		// it lasts until about 9.3 s.
		if s >= 1 && s <= 8 && ru < 2990 {
			t.Errorf("second %d: consumed %v RU, want the full 3,000 RU/s while the bank lasts", s, ru)
		}
		if s >= 10 && math.Abs(ru-100) > 10 {
			t.Errorf("second %d: consumed %v RU after the bank ran out, want the base 100 RU/s", s, ru)
		}
	}
	// Over 30 s: the base's 1 s + 30 s of refill + the whole bank.
	if want := 100.0 + 30*100 + 30000; math.Abs(total-want) > 20 {
		t.Errorf("consumed %v RU in 30 s, want %v", total, want)
	}
}

func TestBucketNoBurstAtOrAbove3000(t *testing.T) {
	for _, rate := range []float64{3000, 5000} {
		b := NewBucket(rate, t0)
		if s := b.Snapshot(t0.Add(time.Hour)); s.Bank != 0 || s.Balance != rate {
			t.Errorf("rate %v idle an hour: %v, want a full base and no bank", rate, s)
		}
		now := t0.Add(time.Hour)
		b.Charge(now, rate+1)
		if ok, _ := b.Admit(now); ok {
			t.Errorf("rate %v: admitted with an exhausted base", rate)
		}
	}
	b := NewBucket(2999, t0)
	if s := b.Snapshot(t0.Add(time.Hour)); s.Bank != 300*2999 {
		t.Errorf("rate 2999 idle an hour: %v, want a full bank", s)
	}
}

func TestBucketSetRate(t *testing.T) {
	b := NewBucket(1000, t0)
	b.Charge(t0, 400) // 600 left
	b.SetRate(200, t0)
	if s := b.Snapshot(t0); s.Rate != 200 || s.Balance != 200 {
		t.Fatalf("after lowering to 200: %v, want the balance cut to 200", s)
	}
	b.Charge(t0, 300) // -100
	if ok, retry := b.Admit(t0); ok || retry != 501*time.Millisecond {
		t.Fatalf("100 RU debt at 200 RU/s: ok %v retry %v, want false 501ms", ok, retry)
	}
	// Refill before SetRate runs at the old rate, after it at the new one.
	b.SetRate(1000, t0.Add(250*time.Millisecond)) // -100 + 50 = -50
	if s := b.Snapshot(t0.Add(250 * time.Millisecond)); s.Balance != -50 {
		t.Fatalf("250 ms at 200 RU/s: %v, want balance -50", s)
	}
	if ok, retry := b.Admit(t0.Add(250 * time.Millisecond)); ok || retry != 51*time.Millisecond {
		t.Fatalf("50 RU debt at 1000 RU/s: ok %v retry %v, want false 51ms", ok, retry)
	}
	// Idle, then raised to a rate without burst: the bank is dropped.
	now := t0.Add(time.Minute)
	if s := b.Snapshot(now); s.Bank == 0 {
		t.Fatalf("idle at 1000 RU/s banked nothing: %v", s)
	}
	b.SetRate(4000, now)
	if s := b.Snapshot(now.Add(time.Minute)); s.Bank != 0 || s.Balance != 4000 {
		t.Fatalf("at 4000 RU/s: %v, want no bank and a full base", s)
	}
	// Lowered back: banking resumes from empty.
	b.SetRate(100, now.Add(time.Minute))
	if s := b.Snapshot(now.Add(time.Minute + 10*time.Second)); s.Bank != 1000 || s.Balance != 100 {
		t.Fatalf("10 s idle at 100 RU/s after 4000: %v, want balance 100, bank 1000", s)
	}
	// Lowering cuts the bank to 300 s of the new rate.
	b.SetRate(1, now.Add(time.Hour))
	if s := b.Snapshot(now.Add(time.Hour)); s.Bank != 300 || s.Balance != 1 {
		t.Fatalf("lowered to 1 RU/s: %v, want balance 1, bank 300", s)
	}
}

func TestBucketZeroRate(t *testing.T) {
	for _, rate := range []float64{0, -5, math.NaN()} {
		b := NewBucket(rate, t0)
		if ok, retry := b.Admit(t0.Add(time.Hour)); ok || retry != time.Second {
			t.Errorf("rate %v: ok %v retry %v, want false 1s", rate, ok, retry)
		}
		b.SetRate(100, t0.Add(time.Hour))
		if ok, retry := b.Admit(t0.Add(time.Hour)); ok || retry != time.Millisecond {
			t.Errorf("rate %v raised to 100: ok %v retry %v, want false 1ms (empty base)", rate, ok, retry)
		}
		if ok, _ := b.Admit(t0.Add(time.Hour + time.Millisecond)); !ok {
			t.Errorf("rate %v raised to 100: not admitted after 1 ms", rate)
		}
	}
}

func TestBucketIsPathIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for _, rate := range []float64{400.0 / 3, 123.456789, 1e-3, 9999.999999} {
		a, b := NewBucket(rate, t0), NewBucket(rate, t0)
		a.Charge(t0, 3*rate)
		b.Charge(t0, 3*rate)
		end := t0.Add(17*time.Minute + 123456789)
		for at := t0; at.Before(end); at = at.Add(time.Duration(rng.Int64N(int64(time.Second)))) {
			a.Admit(at)
		}
		a.Admit(end)
		b.Admit(end)
		if *a != *b {
			t.Errorf("rate %v: consulted often %+v, once %+v", rate, *a, *b)
		}
	}
	// Time going backwards is ignored.
	b := NewBucket(100, t0)
	b.Charge(t0, 100)
	b.Admit(t0.Add(-time.Hour))
	if s := b.Snapshot(t0); s.Balance != 0 {
		t.Errorf("an earlier time changed the balance: %v", s)
	}
}

// tickModel is the bucket as a dumb simulation in whole-millisecond ticks and
// µRU: each tick refills rate/1000 into the base, overflowing into the bank,
// and burst/1000 into the spending allowance.
type tickModel struct {
	rate, burst, bal, bank, bankCap, credit int64
	bankSec, maxRate                        int64
}

func (m *tickModel) setRate(rateRU int64) {
	m.rate = rateRU * 1e6
	m.burst, m.bankCap = 0, 0
	if m.bankSec > 0 && m.rate < m.maxRate {
		m.burst = m.maxRate - m.rate
		m.bankCap = m.rate * m.bankSec
	}
	m.bal = min(m.bal, m.rate)
	m.bank = min(m.bank, m.bankCap)
	m.credit = min(m.credit, m.burst)
}

func (m *tickModel) tick() {
	m.bal += m.rate / 1000
	if m.bal > m.rate {
		m.bank += m.bal - m.rate
		m.bal = m.rate
		if m.bank > m.bankCap {
			m.bank = m.bankCap
		}
	}
	if m.burst > 0 {
		m.credit = min(m.burst, m.credit+m.burst/1000)
	}
}

func (m *tickModel) admits() bool {
	return m.bal > 0 || m.burst > 0 && m.bank > 0 && m.credit > 0
}

func (m *tickModel) charge(x int64) {
	if m.bal > 0 {
		t := min(x, m.bal)
		m.bal -= t
		x -= t
	}
	if x > 0 && m.burst > 0 && m.bank > 0 && m.credit > 0 {
		t := min(x, m.bank)
		m.bank -= t
		m.credit -= t
		x -= t
	}
	m.bal -= x
}

func TestBucketMatchesTickModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var admitted, refused, refusedWithBank, burstAdmits int
	defer func() {
		t.Logf("admitted %d (%d on the bank), refused %d (%d with a bank)", admitted, burstAdmits, refused, refusedWithBank)
	}()
	for run := 0; run < 300; run++ {
		bankSec := []int64{0, 300, 10, 2}[rng.IntN(4)]
		maxRU := []int64{3000, 1500, 500}[rng.IntN(3)]
		cfg := BurstConfig{Bank: time.Duration(bankSec) * time.Second, MaxRate: float64(maxRU)}
		rates := []int64{1, 7, 100, 400, 1000, 1499, 2999, 3000, 5000}
		rate := rates[rng.IntN(len(rates))]
		b := NewBucketBurst(float64(rate), t0, cfg)
		m := &tickModel{bankSec: bankSec, maxRate: maxRU * 1e6}
		m.setRate(rate)
		m.bal, m.credit = m.rate, m.burst
		now := t0
		for op := 0; op < 300; op++ {
			var gap int
			switch r := rng.IntN(20); {
			case r < 12:
				gap = rng.IntN(5)
			case r < 19:
				gap = rng.IntN(2000)
			default:
				gap = rng.IntN(30000) // idle long enough to bank
			}
			for i := 0; i < gap; i++ {
				m.tick()
			}
			now = now.Add(ms(gap))
			switch r := rng.IntN(10); {
			case r < 5:
				ok, retry := b.Admit(now)
				if ok != m.admits() {
					t.Fatalf("run %d op %d: Admit %v, model %v (%+v vs %+v)", run, op, ok, m.admits(), *b, *m)
				}
				switch {
				case ok && m.bal <= 0:
					burstAdmits++
				case !ok && m.bank > 0:
					refusedWithBank++
				}
				if ok {
					admitted++
				} else {
					refused++
				}
				if !ok && m.rate > 0 {
					w := *m
					n := 0
					for !w.admits() && n < 100000 {
						w.tick()
						n++
					}
					if n < 100000 && retry != ms(n) {
						t.Fatalf("run %d op %d: retryAfter %v, model admits after %d ms", run, op, retry, n)
					}
				}
			case r < 9:
				x := rng.Int64N(3*m.rate/2+2) + 1 // µRU
				b.Charge(now, float64(x)/1e6)
				m.charge(x)
			default:
				rate = rates[rng.IntN(len(rates))]
				b.SetRate(float64(rate), now)
				m.setRate(rate)
			}
			if b.bal != m.bal || b.bank != m.bank || b.credit != m.credit {
				t.Fatalf("run %d op %d: bucket bal %d bank %d credit %d, model %d %d %d",
					run, op, b.bal, b.bank, b.credit, m.bal, m.bank, m.credit)
			}
		}
	}
}
