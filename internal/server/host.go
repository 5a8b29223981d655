package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// hostGuard refuses, with 403, every HTTP request whose Host header names a
// host other than loopback or the one of --advertise. The server puts it in
// front of the API and the explorer when its primary key is the well-known
// emulator key, which is served only on loopback: a web page the developer
// visits could otherwise point a DNS name of its own at 127.0.0.1 (DNS
// rebinding) and, being of the same origin as that name, read and write the
// database with the published key. The browser sends the name it resolved
// in Host, so refusing names that are not this machine's closes that door;
// a server with a key of its own needs no such check, since a page cannot
// know the key.
type hostGuard struct {
	next http.Handler
	// advertised is the lowercased host name of --advertise, or "".
	advertised string
}

func newHostGuard(next http.Handler, advertise string) *hostGuard {
	g := &hostGuard{next: next}
	if u, err := url.Parse(advertise); err == nil {
		g.advertised = hostName(u.Host)
	}
	return g
}

func (g *hostGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := hostName(r.Host)
	// HTTP/1.0 may send no Host; a browser always sends one.
	if r.Host == "" || isLoopbackName(host) || host == g.advertised && host != "" {
		g.next.ServeHTTP(w, r)
		return
	}
	also := ""
	if g.advertised != "" {
		also = " or " + g.advertised + " (--advertise)"
	}
	body, _ := json.Marshal(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{"Forbidden", fmt.Sprintf("the request is addressed to host %q; with the well-known emulator key this server answers only "+
		"requests addressed to a loopback name (localhost, 127.0.0.1, [::1])%s, so that a web page cannot reach it through a DNS name "+
		"that points at this machine. Address it by one of those, or give the server a key of your own with --key", r.Host, also)})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write(body)
}

// hostName returns the lowercased host name of a Host header or URL host
// (without port, brackets or a final dot).
func hostName(hostport string) string {
	h := (&url.URL{Host: hostport}).Hostname()
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// isLoopbackName reports whether a host name always means this machine:
// localhost and the names under it, which RFC 6761 (section 6.3) reserves
// for loopback and browsers resolve without asking DNS, and loopback IP
// addresses.
func isLoopbackName(host string) bool {
	return isLoopback(host) || strings.HasSuffix(host, ".localhost")
}
