package gio_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
)

// FuzzDecodeRequest feeds arbitrary bytes to both decoders and to the
// frame splitter: they must return a request or a *DecodeError, never
// panic, and a decoded request has a canonical id.
func FuzzDecodeRequest(f *testing.F) {
	frames, _ := filepath.Glob(filepath.Join("testdata", "jsframes", "*", "*.bin"))
	for _, p := range frames {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
			if _, body, err := gio.SplitMime(b); err == nil {
				f.Add(body)
			}
		}
	}
	f.Add([]byte(binReq("bytecode", injectOf(gb{}.fq(0x09).i32(2).fqInt(1).fq(0x1e).str("within").i32(1).fq(0x0a).i32(0)))))
	f.Add([]byte(`{"requestId":"123e4567-e89b-12d3-a456-426614174000","op":"eval","args":{"gremlin":"g.V()","bindings":{"x":{"@type":"g:Int64","@value":1}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := gio.Limits{MaxBytes: 1 << 16, MaxDepth: 32, MaxItems: 256}
		for _, mime := range []string{gio.MimeGraphBinary, gio.MimeGraphSONv3} {
			req, err := gio.DecodeRequestLimits(mime, data, lim)
			check(t, req, err)
		}
		if mime, body, err := gio.SplitMime(data); err == nil {
			req, err := gio.DecodeRequestLimits(mime, body, lim)
			if errors.Is(err, gio.ErrUnsupportedMime) {
				return
			}
			check(t, req, err)
		}
	})
}

func check(t *testing.T, req *gio.Request, err error) {
	t.Helper()
	if err != nil {
		var de *gio.DecodeError
		if !errors.As(err, &de) || req != nil {
			t.Fatalf("error %T %v with request %v", err, err, req)
		}
		return
	}
	if len(req.ID) != 36 || req.Args == nil {
		t.Fatalf("request %+v", req)
	}
}
