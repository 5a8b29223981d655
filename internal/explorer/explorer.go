package explorer

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// Path is where the explorer is served; Path + "index.html" serves the same
// page (the emulator's address for it).
const Path = "/_explorer/"

//go:embed assets
var assets embed.FS

// Config is what the page is told about the server.
type Config struct {
	// EmulatorKey says that the server's primary key is the well-known
	// emulator key: the sign-in form is then filled in with it. The server
	// then answers only requests addressed to loopback names (see package
	// server), so the page is never served filled in under another name.
	EmulatorKey bool
}

// securityHeaders are set on every explorer response.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"Cache-Control":          "no-cache",
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
}

// emulatorMarker is the attribute of index.html's root element that tells
// the page whether the emulator key is in use.
const emulatorMarker = `data-emulator-key="false"`

// Handler serves the explorer under Path and passes every other request to
// next. A request for the bare "/_explorer" is redirected to Path.
func Handler(next http.Handler, cfg Config) http.Handler {
	files := map[string][]byte{}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		files[strings.TrimPrefix(p, "assets/")] = b
		return err
	})
	if err != nil {
		panic("explorer: reading the embedded assets: " + err.Error())
	}
	if cfg.EmulatorKey {
		files["index.html"] = bytes.Replace(files["index.html"], []byte(emulatorMarker), []byte(`data-emulator-key="true"`), 1)
	}
	return &handler{next: next, files: files}
}

type handler struct {
	next  http.Handler
	files map[string][]byte
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == strings.TrimSuffix(Path, "/") {
		http.Redirect(w, r, Path, http.StatusMovedPermanently)
		return
	}
	if !strings.HasPrefix(p, Path) {
		h.next.ServeHTTP(w, r)
		return
	}
	for k, v := range securityHeaders {
		w.Header().Set(k, v)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the explorer's files are read with GET", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(p, Path)
	if name == "" {
		name = "index.html"
	}
	body, ok := h.files[name]
	ctype := contentTypes[path.Ext(name)]
	if !ok || ctype == "" {
		http.Error(w, "no explorer file "+name, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ctype)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}
