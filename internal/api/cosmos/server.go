package cosmos

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/activityid"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
)

// Config configures a Server.
type Config struct {
	Engine *engine.Engine
	// PrimaryKey and ReadOnlyKey are the decoded master keys. ReadOnlyKey may be nil.
	PrimaryKey  []byte
	ReadOnlyKey []byte
	// Advertise is the endpoint URL advertised to clients in the account's
	// locations. Empty means derived from each request's Host and scheme.
	Advertise string
	// Now is the clock used to check x-ms-date. Defaults to time.Now.
	Now func() time.Time
	// MaxClockSkew is how far x-ms-date may be from Now. Defaults to 15 minutes.
	MaxClockSkew time.Duration
	// Ready, when set, says whether the server can take writes: ReadyPath
	// answers 503 with its error (e.g. the disk is nearly full).
	Ready func() error
}

// Server is an http.Handler serving the Cosmos NoSQL REST API.
type Server struct {
	cfg      Config
	engine   *engine.Engine
	verifier *auth.Verifier
	lastDate atomic.Pointer[parsedDate]
}

// NewServer returns a Server for cfg.
func NewServer(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxClockSkew == 0 {
		cfg.MaxClockSkew = 15 * time.Minute
	}
	return &Server{cfg: cfg, engine: cfg.Engine, verifier: auth.NewVerifier(cfg.PrimaryKey, cfg.ReadOnlyKey)}
}

// ReadyPath answers 200 once the server is serving, 503 while it cannot take
// writes (Config.Ready); it needs no signature.
const ReadyPath = "/_ready"

// request is one request in flight with what the handlers need of it.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	segs   []string // percent-decoded path segments
	access auth.Access
	charge float64
	// session is the session token to send; "" sends a neutral one.
	session string
}

// Response headers set on every request, with their canonical keys and
// shared values, so that setting them costs no allocation or canonicalizing.
const (
	hActivityID    = "X-Ms-Activity-Id"
	hRequestCharge = "X-Ms-Request-Charge"
	hSessionToken  = "X-Ms-Session-Token"
	hGatewayVer    = "X-Ms-Gatewayversion"
	hContentType   = "Content-Type"
)

var (
	vGatewayVer     = []string{"version=2.14.0"}
	vJSON           = []string{"application/json"}
	vNeutralSession = []string{"0:-1#1"}
)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if a := r.Header[hActivityID]; len(a) > 0 && a[0] != "" {
		h[hActivityID] = a[:1]
	} else {
		h[hActivityID] = []string{activityid.New()}
	}
	h[hGatewayVer] = vGatewayVer
	h[hContentType] = vJSON
	req := &request{w: w, r: r}

	if r.URL.Path == ReadyPath {
		if s.cfg.Ready != nil {
			if err := s.cfg.Ready(); err != nil {
				s.writeError(req, fmt.Errorf("%w: not ready: %v", engine.ErrUnavailable, err))
				return
			}
		}
		req.charge = 0
		h.Set("x-ms-request-charge", "0")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"status":"ready"}`))
		return
	}
	if r.URL.Path == MetricsPath {
		s.metrics(w)
		return
	}
	segs, err := splitPath(r.URL.EscapedPath())
	if err != nil {
		s.writeError(req, errBadRequest("the request path is malformed: %v", err))
		return
	}
	req.segs = segs
	if err := s.authenticate(req); err != nil {
		s.writeError(req, err)
		return
	}
	s.route(req)
}

// splitPath splits an escaped URL path into percent-decoded segments,
// ignoring a leading and a trailing slash.
func splitPath(p string) ([]string, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, err
		}
		parts[i] = u
	}
	return parts, nil
}

func (s *Server) route(req *request) {
	segs, m := req.segs, req.r.Method
	n := len(segs)
	if n == 0 {
		if m != http.MethodGet {
			s.writeError(req, errMethod(m, "the account"))
			return
		}
		s.getAccount(req)
		return
	}
	if segs[0] != "dbs" {
		if segs[0] == "offers" && n <= 2 {
			s.offers(req)
			return
		}
		s.writeError(req, errNotFound("no resource at /%s", strings.Join(segs, "/")))
		return
	}
	switch {
	case n == 1:
		s.databases(req)
	case n == 2:
		s.database(req, segs[1])
	case n == 3 && segs[2] == "colls":
		s.containers(req, segs[1])
	case n == 4 && segs[2] == "colls":
		s.container(req, segs[1], segs[3])
	case n == 5 && segs[2] == "colls" && segs[4] == "docs":
		s.documents(req, segs[1], segs[3])
	case n == 6 && segs[2] == "colls" && segs[4] == "docs":
		s.document(req, segs[1], segs[3], segs[5])
	case n == 5 && segs[2] == "colls" && segs[4] == "pkranges":
		s.partitionKeyRanges(req, segs[1], segs[3])
	case n == 5 && segs[2] == "colls" && segs[4] == "partitions":
		s.partitionStats(req, segs[1], segs[3])
	case n >= 5 && segs[2] == "colls" && isKnownUnsupported(segs[4]):
		s.writeError(req, errNotImplemented("%s are not supported by this server version", segs[4]))
	case n >= 3 && segs[2] == "users":
		s.writeError(req, errNotImplemented("users and permissions are not supported by this server version"))
	default:
		s.writeError(req, errNotFound("no resource at /%s", strings.Join(segs, "/")))
	}
}

func isKnownUnsupported(seg string) bool {
	switch seg {
	case "sprocs", "triggers", "udfs", "conflicts", "clientencryptionkeys":
		return true
	}
	return false
}

// writeJSON sends a successful response with the common headers.
func (s *Server) writeJSON(req *request, status int, body []byte) {
	s.setCommon(req)
	req.w.WriteHeader(status)
	if len(body) > 0 && status != http.StatusNoContent && status != http.StatusNotModified {
		_, _ = req.w.Write(body)
	}
}

func (s *Server) setCommon(req *request) {
	h := req.w.Header()
	c := req.charge
	if c <= 0 {
		c = 1
	}
	h[hRequestCharge] = []string{strconv.FormatFloat(c, 'f', 2, 64)}
	if req.session != "" {
		h[hSessionToken] = []string{req.session}
	} else {
		h[hSessionToken] = vNeutralSession
	}
}

// headerBool reads a boolean header, which SDKs send as true, True or TRUE.
func headerBool(r *http.Request, name string) bool {
	return strings.EqualFold(r.Header.Get(name), "true")
}
