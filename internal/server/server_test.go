package server

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/auth"
)

func TestValidateRefusesWeakKeysOffLoopback(t *testing.T) {
	strong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 64)))
	strong2 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("r", 32)))
	short := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("s", MinKeyBytes-1)))
	oneByte := base64.StdEncoding.EncodeToString([]byte("x"))
	// The emulator key with different padding whitespace is still it.
	emulator := " " + auth.EmulatorKey + "\n"
	f := func(o Options, wantSub ...string) {
		t.Helper()
		o.InMemory = true
		err := o.Validate()
		if len(wantSub) == 0 {
			if err != nil {
				t.Errorf("Validate(listen %q): %v, want nil", o.Listen, err)
			}
			return
		}
		if err == nil {
			t.Errorf("Validate(listen %q, key %q, read-only key %q) = nil, want an error", o.Listen, o.Key, o.ReadOnlyKey)
			return
		}
		for _, s := range wantSub {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("Validate(listen %q): %q does not say %q", o.Listen, err, s)
			}
		}
	}
	for _, listen := range []string{"0.0.0.0:8081", ":8081", "192.168.1.5:8081", "[::]:8081", "db.example.com:8081"} {
		f(Options{Listen: listen}, "emulator key", "--key")
		f(Options{Listen: listen, Key: auth.EmulatorKey}, "--key", "emulator key", "openssl rand -base64 64")
		f(Options{Listen: listen, Key: emulator}, "--key", "emulator key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: auth.EmulatorKey}, "--read-only-key", "emulator key")
		f(Options{Listen: listen, Key: oneByte}, "1-byte --key", "at least 32 bytes", "openssl rand -base64 64")
		f(Options{Listen: listen, Key: short}, "31-byte --key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: short}, "31-byte --read-only-key")
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: strong2})
		f(Options{Listen: listen, Key: strong2})
		f(Options{Listen: listen, Key: strong, ReadOnlyKey: " " + strong}, "must differ")
	}
	// On loopback, development keys stay allowed.
	for _, listen := range []string{"127.0.0.1:8081", "localhost:8081", "[::1]:8081"} {
		f(Options{Listen: listen})
		f(Options{Listen: listen, Key: auth.EmulatorKey})
		f(Options{Listen: listen, Key: oneByte, ReadOnlyKey: short})
		f(Options{Listen: listen, ReadOnlyKey: auth.EmulatorKey}, "must differ")
	}
}
