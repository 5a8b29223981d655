package accept_test

import (
	"errors"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/parsecdb/parsec/internal/accept"
)

// TestRetry checks which Accept errors are retried: running out of file
// descriptors is; a closed listener and an error that lasts are not.
func TestRetry(t *testing.T) {
	f := func(err error, want bool) {
		t.Helper()
		var b accept.Backoff
		if got := b.Retry(err); got != want {
			t.Errorf("Retry(%v) = %v, want %v", err, got, want)
		}
	}
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
	}
	f(opErr(syscall.EMFILE), true)
	f(opErr(syscall.ENFILE), true)
	f(&net.OpError{Op: "accept", Net: "tcp", Err: net.ErrClosed}, false)
	f(opErr(syscall.EINVAL), false)
	f(errors.New("listener broken"), false)
}
