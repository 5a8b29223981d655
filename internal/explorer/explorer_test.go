package explorer

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestHandlerServesThePageAndPassesTheRestOn(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
	h := Handler(api, Config{})
	for _, p := range []string{"/_explorer/", "/_explorer/index.html"} {
		w := get(t, h, http.MethodGet, p)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "<title>Parsec Explorer</title>") {
			t.Errorf("%s: %d %.60s", p, w.Code, w.Body.String())
		}
		if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("%s: content type %q", p, ct)
		}
		if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q", p, csp)
		}
		if !strings.Contains(w.Body.String(), `data-emulator-key="false"`) {
			t.Errorf("%s: the page says the emulator key is in use, but it is not", p)
		}
	}
	if w := get(t, h, http.MethodGet, "/_explorer/app.js"); w.Code != 200 || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("app.js: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if w := get(t, h, http.MethodGet, "/_explorer"); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/_explorer/" {
		t.Errorf("/_explorer: %d to %q", w.Code, w.Header().Get("Location"))
	}
	for _, p := range []string{"/_explorer/nope.js", "/_explorer/assets/app.js", "/_explorer/../go.mod"} {
		if w := get(t, h, http.MethodGet, p); w.Code != 404 {
			t.Errorf("%s: %d, want 404", p, w.Code)
		}
	}
	if w := get(t, h, http.MethodPost, "/_explorer/"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
	for _, p := range []string{"/", "/dbs", "/_explorerx", "/metrics"} {
		if w := get(t, h, http.MethodGet, p); w.Code != 299 {
			t.Errorf("%s went to the explorer (%d), not the API", p, w.Code)
		}
	}
}

func TestEmulatorKeyIsAnnounced(t *testing.T) {
	w := get(t, Handler(http.NotFoundHandler(), Config{EmulatorKey: true}), http.MethodGet, "/_explorer/")
	if !strings.Contains(w.Body.String(), `data-emulator-key="true"`) {
		t.Error("the page is not told that the emulator key is in use")
	}
}

// Everything the page loads is embedded: no address outside the server,
// no inline script, and every module it imports is one of the files.
func TestAssetsAreSelfContained(t *testing.T) {
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	cssLoads := regexp.MustCompile(`@import|url\(`)
	imports := regexp.MustCompile(`(?m)^import .* from "\./([^"]+)";$`)
	names := map[string]bool{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names[strings.TrimPrefix(p, "assets/")] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range names {
		b, _ := assets.ReadFile("assets/" + name)
		if m := cssLoads.Find(b); m != nil && strings.HasSuffix(name, ".css") {
			t.Errorf("%s loads something: %q", name, m)
		}
		if m := external.Find(b); m != nil {
			t.Errorf("%s refers to something outside the server: %q", name, m)
		}
		for _, m := range imports.FindAllSubmatch(b, -1) {
			if !names[string(m[1])] {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
		if strings.HasSuffix(name, ".html") && regexp.MustCompile(`<script>|<script(?:\s[^>]*)?>[^<]`).Match(b) {
			t.Errorf("%s has an inline script, which the CSP forbids", name)
		}
	}
	if !names["index.html"] || !names["app.js"] {
		t.Errorf("embedded files: %v", names)
	}
}
