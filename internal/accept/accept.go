// Package accept is what every accept loop of the server does when Accept
// fails: out of file descriptors (EMFILE, ENFILE), the listener is still
// good, so the loop waits and accepts again, as net/http's Server does,
// instead of returning and leaving the port unserved for good.
package accept

import (
	"errors"
	"net"
	"time"
)

// Backoff bounds: a failed Accept waits MinBackoff, each failure in a row
// twice as long, up to MaxBackoff (net/http's figures).
const (
	MinBackoff = 5 * time.Millisecond
	MaxBackoff = time.Second
)

// Backoff is the wait of one accept loop after failed Accepts. Its zero
// value is ready; it is not safe for concurrent use.
type Backoff struct {
	d    time.Duration // the last wait
	woke time.Time     // when it ended
}

// Retry reports whether err, returned by Accept, is temporary. If it is, it
// first sleeps: MinBackoff after a first failure, twice the previous wait
// after each failure that follows within MaxBackoff of it, at most
// MaxBackoff. A closed listener's error, like any other that lasts, is not
// temporary.
func (b *Backoff) Retry(err error) bool {
	var te interface{ Temporary() bool }
	if errors.Is(err, net.ErrClosed) || !errors.As(err, &te) || !te.Temporary() {
		return false
	}
	if time.Since(b.woke) > MaxBackoff {
		b.d = 0 // the last failures are over
	}
	b.d = min(max(2*b.d, MinBackoff), MaxBackoff)
	time.Sleep(b.d)
	b.woke = time.Now()
	return true
}
