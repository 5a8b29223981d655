package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/activityid"
)

// APIVersion is the x-ms-version the bench sends (the one the Go SDK sends).
const APIVersion = "2020-11-05"

// userAgent is sent on every request.
const userAgent = "parsec-bench/1"

// client is the HTTP side of a run: one keep-alive transport shared by all
// workers, and one-off signed calls for the setup phase.
type client struct {
	base *url.URL // scheme and host of the endpoint
	tr   *http.Transport
	key  []byte
	// consistency is the x-ms-consistency-level the workers send ("":
	// none, the account's default).
	consistency string
}

// consistencyHeader is the header value of c.consistency, or nil.
func (c *client) consistencyHeader() []string {
	if c.consistency == "" {
		return nil
	}
	return []string{c.consistency}
}

func newClient(o *Options, key []byte) (*client, error) {
	u, err := url.Parse(o.Endpoint)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: (&net.Dialer{
			Timeout:   5 * time.Second,
			KeepAlive: 30 * time.Second,
		}).DialContext,
		// One idle connection per worker, plus the setup phase's.
		MaxIdleConns:          o.Concurrency + 8,
		MaxIdleConnsPerHost:   o.Concurrency + 8,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
	return &client{base: &url.URL{Scheme: u.Scheme, Host: u.Host}, tr: tr, key: key, consistency: o.Consistency}, nil
}

func (c *client) close() { c.tr.CloseIdleConnections() }

// response is the outcome of one setup call.
type response struct {
	status int
	header http.Header
	body   []byte
	charge float64
}

// message returns the "message" of a Cosmos error body, or the body itself.
func (r *response) message() string {
	var e struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(r.body, &e) == nil && e.Message != "" {
		return e.Message
	}
	s := strings.TrimSpace(string(r.body))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// call sends one signed request (unsigned if signed is false) and reads the
// whole response. Only transport failures are errors; any status is a
// response.
func (c *client) call(ctx context.Context, method, path string, hdr map[string]string, body []byte, signed bool) (*response, error) {
	u := *c.base
	u.Path = path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("x-ms-version", APIVersion)
	req.Header.Set("x-ms-activity-id", activityid.New())
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if signed {
		date, authz := NewSigner(c.key).Sign(NewResource(method, path), time.Now())
		req.Header.Set("x-ms-date", date)
		req.Header.Set("Authorization", authz)
	}
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("cannot read the response to %s %s: %w", method, path, err)
	}
	r := &response{status: resp.StatusCode, header: resp.Header, body: b}
	r.charge, _ = strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64)
	return r, nil
}

// unexpected describes a response the bench cannot go on with.
func unexpected(what string, r *response) error {
	return fmt.Errorf("cannot %s: the server answered %d %s: %s", what, r.status, http.StatusText(r.status), r.message())
}
