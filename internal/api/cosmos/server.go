package cosmos

import (
	"bytes"
	"fmt"
	"github.com/parsecdb/parsec/internal/cluster"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/parsecdb/parsec/internal/activityid"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/gateway"
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
	// MetricsPublic serves /metrics without a key, and then without the
	// hot-key series, whose labels are partition key values.
	MetricsPublic bool
	// MetricsRefresh is how long a /metrics snapshot is served before it is
	// rebuilt (by the clock Now). Defaults to DefaultMetricsRefresh.
	MetricsRefresh time.Duration
	// Ready, when set, says whether the server can take writes: ReadyPath
	// answers 503 with its error (e.g. the disk is nearly full).
	Ready func() error
	// Consistency is the account's default consistency; it must pass
	// ConsistencyPolicy.Normalize (the zero value is Session).
	Consistency ConsistencyPolicy
	// Cluster is the node's cluster; nil for a single node. A request a
	// follower cannot serve is sent on to the leader (forward.go).
	Cluster *cluster.Node
	// Gateway runs the writes and prepares the reads (every API of the
	// node shares one); nil: one of the server's own, over Cluster.
	Gateway *gateway.Gateway
}

// Server is an http.Handler serving the Cosmos NoSQL REST API.
type Server struct {
	cfg      Config
	engine   *engine.Engine
	verifier *auth.Verifier
	lastDate atomic.Pointer[parsedDate]
	metrics  metricsCache
	// advising is set while a partition-key analysis runs (advise.go).
	advising atomic.Bool
	// gw runs the writes and prepares the reads (internal/gateway).
	gw *gateway.Gateway
	// forwarder sends requests on to other nodes (forward.go); nil
	// without a cluster.
	forwarder *forwarder
}

// NewServer returns a Server for cfg.
func NewServer(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxClockSkew == 0 {
		cfg.MaxClockSkew = 15 * time.Minute
	}
	if cfg.MetricsRefresh <= 0 {
		cfg.MetricsRefresh = DefaultMetricsRefresh
	}
	if err := cfg.Consistency.Normalize(); err != nil {
		panic("cosmos: invalid Config.Consistency: " + err.Error())
	}
	s := &Server{cfg: cfg, engine: cfg.Engine, verifier: auth.NewVerifier(cfg.PrimaryKey, cfg.ReadOnlyKey)}
	s.gw = cfg.Gateway
	if cfg.Cluster != nil {
		s.forwarder = newForwarder(cfg.Cluster.ClientCertificate)
		if s.gw == nil {
			s.gw = gateway.New(cfg.Engine, cfg.Cluster)
		}
	} else if s.gw == nil {
		s.gw = gateway.New(cfg.Engine, nil)
	}
	return s
}

// ReadyPath answers 200 once the server is serving, 503 while it cannot take
// writes (Config.Ready); it needs no signature.
const ReadyPath = "/_ready"

// request is one request in flight with what the handlers need of it.
type request struct {
	w    http.ResponseWriter // lw, which sends Cosmos's header names in lower case
	lw   lowerWriter
	r    *http.Request
	segs []string // percent-decoded path segments, resource ids replaced by names
	// ridBased is set when the path addressed resources by resource id
	// (see resolveRids): the signature then covers a rid link.
	ridBased bool
	charge   float64
	// session is the session token to send; "" sends a neutral one.
	session string
	// rangeID, when set, is the partition key range that served an item
	// operation (x-ms-documentdb-partitionkeyrangeid).
	rangeID string
	// scopeKey is the partition key a resource token limits the request
	// to, or nil (see authorizeGrant).
	scopeKey epk.Key
	// body is the request's body once read (readBody).
	body []byte
}

// Response headers set on every request, with their canonical keys and
// shared values, so that setting them costs no allocation or canonicalizing.
const (
	hActivityID    = "X-Ms-Activity-Id"
	hRequestCharge = "X-Ms-Request-Charge"
	hSessionToken  = "X-Ms-Session-Token"
	// hConsistencyLevel is a request header.
	hConsistencyLevel = "X-Ms-Consistency-Level"
	hGatewayVer       = "X-Ms-Gatewayversion"
	hContentType      = "Content-Type"
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
	req := &request{r: r}
	req.lw.ResponseWriter = w
	req.w = &req.lw
	w = req.w

	foldItemQuery(r.URL)
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
		s.serveMetrics(req)
		return
	}
	segs, err := splitPath(r.URL.EscapedPath())
	if err != nil {
		s.writeError(req, errBadRequest("the request path is malformed: %v", err))
		return
	}
	rp, ridBased := s.resolveRids(segs)
	if ridBased {
		segs, req.ridBased = rp.names, true
	}
	req.segs = segs
	op := classify(r.Method, segs, r.Header)
	if err := s.authenticate(req, op); err != nil {
		s.writeError(req, err)
		return
	}
	if err := s.cfg.Consistency.checkConsistency(r.Header); err != nil {
		s.writeError(req, err)
		return
	}
	if rp.err != nil {
		s.writeError(req, rp.err)
		return
	}
	s.route(req, op)
}

// foldItemQuery puts a raw '?' of an item link back into the item id. The
// REST API has no query parameters, and a client that does not escape '?'
// in an id (the JavaScript SDK) signs the whole link, so the id is the
// last segment with what the URL parser took for a query: authentication
// and routing both read the folded path.
func foldItemQuery(u *url.URL) {
	if u.RawQuery == "" && !u.ForceQuery {
		return
	}
	segs := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
	if len(segs) != 6 || segs[0] != "dbs" || segs[2] != "colls" || segs[4] != "docs" {
		return
	}
	q, err := url.PathUnescape(u.RawQuery)
	if err != nil {
		return
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "?" + q
	u.RawPath, u.RawQuery, u.ForceQuery = "", "", false
}

// splitPath splits an escaped URL path into percent-decoded segments,
// ignoring a leading and a trailing slash. Every segment must be UTF-8,
// as every id is.
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
		if !utf8.ValidString(u) {
			return nil, fmt.Errorf("the segment %q is not valid UTF-8", u)
		}
		parts[i] = u
	}
	return parts, nil
}

// route runs the operation op, classified from req (see classify).
//
// A handler writes its own successful response and returns nil, or returns
// its error without writing anything; route then sends the error response.
// Headers and the fields of req (charge, session) that the handler set
// before failing are sent with it.
func (s *Server) route(req *request, op operation) {
	err := s.dispatch(req, op)
	if err != nil && s.catalogBehind(req, op, err) {
		if req.body != nil {
			req.r.Body = io.NopCloser(bytes.NewReader(req.body))
		}
		err = s.dispatch(req, op)
	}
	if err != nil {
		s.writeError(req, err)
	}
}

// dispatch runs the operation op and returns its error (see route).
func (s *Server) dispatch(req *request, op operation) error {
	var err error
	switch op.kind {
	case opError:
		err = op.err
	case opReadAccount:
		err = s.getAccount(req)
	case opReadCluster:
		err = s.clusterStatus(req)
	case opListDatabases, opQueryDatabases, opCreateDatabase, opReadDatabase, opDeleteDatabase:
		err = s.databases(req, op)
	case opListContainers, opQueryContainers, opCreateContainer, opReadContainer, opReplaceContainer, opDeleteContainer:
		err = s.containers(req, op)
	case opReadFeed, opChangeFeed, opQueryPlan, opQuery, opBatch, opCreateItem, opUpsertItem,
		opReadItem, opReplaceItem, opPatchItem, opDeleteItem:
		err = s.items(req, op)
	case opReadPartitionKeyRanges:
		err = s.partitionKeyRanges(req, op.db, op.coll)
	case opReadPartitionStats:
		err = s.partitionStats(req, op.db, op.coll)
	case opAdvise:
		err = s.advise(req, op)
	case opDeletePartitionKey:
		err = s.deletePartitionKey(req, op)
	case opListEncryptionKeys, opQueryEncryptionKeys, opCreateEncryptionKey, opReadEncryptionKey, opReplaceEncryptionKey:
		err = s.encryptionKeys(req, op)
	case opListOffers, opQueryOffers, opReadOffer, opReplaceOffer:
		err = s.offers(req, op)
	case opListConflicts, opReadConflict:
		err = s.conflicts(req, op)
	case opListUsers, opQueryUsers, opCreateUser, opUpsertUser, opReadUser, opReplaceUser, opDeleteUser:
		err = s.users(req, op)
	case opListPermissions, opQueryPermissions, opCreatePermission, opUpsertPermission,
		opReadPermission, opReplacePermission, opDeletePermission:
		err = s.permissions(req, op)
	case opListScripts, opCreateScript, opQueryScripts, opReadScript, opReplaceScript, opDeleteScript, opExecuteProcedure:
		err = s.scripts(req, op)
	default:
		panic("BUG: no route for " + op.kind.String())
	}
	return err
}

func isScriptFeed(seg string) bool {
	return seg == "sprocs" || seg == "triggers" || seg == "udfs"
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
	if req.rangeID != "" {
		h[hRangeIDResponse] = []string{req.rangeID}
	}
}

// hRangeIDResponse is the header that names the range an item operation
// was served by.
const hRangeIDResponse = "X-Ms-Documentdb-Partitionkeyrangeid"

// itemSession records the session of an item operation: its token, and
// the range that served it.
func (req *request) itemSession(s engine.Session) {
	req.session = sessionToken(s)
	req.rangeID = s.RangeID
}

// headerBool reads a boolean header, which SDKs send as true, True or TRUE.
func headerBool(r *http.Request, name string) bool {
	return isTrue(r.Header, name)
}
