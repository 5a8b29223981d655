package gio_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/parsecdb/parsec/internal/api/gremlin/gio"
)

// wsServer is a minimal Gremlin Server for the driver tests: it decodes
// each binary frame with gio, records the request, and answers with the
// responses answer returns, encoded with gio for the request's mime type.
type wsServer struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(req *gio.Request) []*gio.Response

	mu     sync.Mutex
	reqs   []*gio.Request
	mimes  []string
	errs   []error
	frames [][]byte
}

func newWSServer(t *testing.T, answer func(req *gio.Request) []*gio.Response) *wsServer {
	s := &wsServer{t: t, answer: answer}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			_, frame, err := conn.ReadMessage()
			if err != nil {
				return
			}
			mime, req, err := gio.DecodeFrame(frame)
			s.mu.Lock()
			s.frames = append(s.frames, frame)
			s.mimes = append(s.mimes, mime)
			if err != nil {
				s.errs = append(s.errs, err)
				s.mu.Unlock()
				return
			}
			s.reqs = append(s.reqs, req)
			s.mu.Unlock()
			for _, resp := range s.answer(req) {
				out, err := gio.EncodeResponse(mime, resp)
				if err != nil {
					s.mu.Lock()
					s.errs = append(s.errs, err)
					s.mu.Unlock()
					return
				}
				kind := websocket.BinaryMessage
				if gio.FormatOf(mime) != gio.FormatGraphBinary {
					kind = websocket.TextMessage
				}
				if err := conn.WriteMessage(kind, out); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *wsServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/gremlin" }

func (s *wsServer) requests() ([]*gio.Request, []string, []error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*gio.Request(nil), s.reqs...), append([]string(nil), s.mimes...), append([]error(nil), s.errs...)
}

// record writes the frames received to dir as <prefix>-<n>.bin (used to
// refresh testdata/jsframes from the real JavaScript driver).
func (s *wsServer) record(dir, prefix string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, f := range s.frames {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d.bin", prefix, i)), f, 0o644); err != nil {
			return err
		}
	}
	return nil
}
