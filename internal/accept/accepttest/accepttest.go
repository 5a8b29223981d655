// Package accepttest gives accept loops under test a listener that runs out
// of file descriptors.
package accepttest

import (
	"net"
	"os"
	"sync/atomic"
	"syscall"
)

// Listener is a net.Listener whose next Accepts fail with EMFILE, as a
// process out of file descriptors sees, as many times as Fail says; then it
// accepts from the listener it wraps.
type Listener struct {
	net.Listener
	// Fail is how many Accepts fail from now on.
	Fail atomic.Int64
	// Failed counts the Accepts that failed.
	Failed atomic.Int64
}

// New returns a Listener over ln whose next n Accepts fail.
func New(ln net.Listener, n int) *Listener {
	l := &Listener{Listener: ln}
	l.Fail.Store(int64(n))
	return l
}

// Accept fails with EMFILE while Fail is positive, then accepts.
func (l *Listener) Accept() (net.Conn, error) {
	if l.Fail.Add(-1) >= 0 {
		l.Failed.Add(1)
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}
