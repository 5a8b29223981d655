package table

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/api/table/tableauth"
	"github.com/parsecdb/parsec/internal/engine"
)

// Database is the database that holds the tables, as on Cosmos DB.
const Database = "TablesDB"

// DefaultThroughput is the RU/s a table is created with, as on Cosmos DB.
const DefaultThroughput = 400

// maxBodyBytes bounds a request body: an entity's 2 MB and a batch's
// 4 MiB with room for their framing.
const maxBodyBytes = 5 << 20

// Config configures a Server.
type Config struct {
	Engine *engine.Engine
	// PrimaryKey signs requests that may read and write; ReadOnlyKey,
	// when set, requests that may only read. Both are the decoded keys.
	PrimaryKey  []byte
	ReadOnlyKey []byte
	// Throughput is the RU/s of a table created through this API
	// (default DefaultThroughput); it can be changed afterwards like any
	// container's.
	Throughput int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Log, when set, receives internal errors.
	Log *log.Logger
}

// Server serves the Azure Table REST protocol over the engine.
type Server struct {
	cfg Config
	eng *engine.Engine

	verifier tableauth.Verifier
	keys     []tableauth.Key

	mu     sync.Mutex
	lastTS time.Time
}

// New returns a Server.
func New(cfg Config) *Server {
	if cfg.Throughput == 0 {
		cfg.Throughput = DefaultThroughput
	}
	s := &Server{cfg: cfg, eng: cfg.Engine}
	s.verifier = tableauth.Verifier{Now: s.now}
	s.keys = []tableauth.Key{{Name: "primary", Secret: cfg.PrimaryKey}}
	if len(cfg.ReadOnlyKey) > 0 {
		s.keys = append(s.keys, tableauth.Key{Name: "read-only", Secret: cfg.ReadOnlyKey, ReadOnly: true})
	}
	return s
}

func (s *Server) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}

// timestamp returns the Timestamp of a write: the server's time at 100 ns
// precision, strictly later than every Timestamp it gave before, so that
// two writes never share an ETag.
func (s *Server) timestamp() time.Time {
	t := s.now().UTC().Truncate(100 * time.Nanosecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !t.After(s.lastTS) {
		t = s.lastTS.Add(100 * time.Nanosecond)
	}
	s.lastTS = t
	return t
}

// request is one request being served.
type request struct {
	w       http.ResponseWriter
	r       *http.Request
	account string
	grant   tableauth.Grant
	// base is the service root the client addressed: scheme, host, and
	// the account when it is in the path.
	base   string
	meta   metadata
	id     string
	charge float64
	// resource is the path after the account: "Tables",
	// "Tables('t')", "t()", "t(PartitionKey='a',RowKey='b')", "$batch".
	resource string
	query    url.Values
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ServeHTTP serves one request of the Table protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := &request{w: w, r: r, id: newRequestID(), query: r.URL.Query()}
	defer func() {
		if p := recover(); p != nil {
			if s.cfg.Log != nil {
				s.cfg.Log.Printf("table: panic serving %s %s: %v", r.Method, r.URL.Path, p)
			}
			s.writeError(req, newErr(http.StatusInternalServerError, codeInternalError, "The server encountered an internal error."))
		}
	}()
	if err := s.serve(req); err != nil {
		s.writeError(req, err)
	}
}

func (s *Server) serve(req *request) error {
	r := req.r
	r.Body = http.MaxBytesReader(req.w, r.Body, maxBodyBytes)
	req.meta = metadataOf(r)
	segs := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")
	pathAccount := ""
	switch len(segs) {
	case 1:
	case 2:
		pathAccount, segs = segs[0], segs[1:]
	default:
		return newErr(http.StatusBadRequest, codeInvalidInput, "The request URL %q names no Table resource.", r.URL.Path)
	}
	req.resource = segs[0]
	req.account = accountOf(r, pathAccount)
	if err := s.authenticate(req, req.account); err != nil {
		return err
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	req.base = scheme + "://" + r.Host
	if pathAccount != "" {
		req.base += "/" + pathAccount
	}
	method := r.Method
	if o := r.Header.Get("X-HTTP-Method"); o != "" && method == http.MethodPost {
		switch o {
		case "MERGE", http.MethodPut, http.MethodDelete, http.MethodPatch:
			method = o
		default:
			return newErr(http.StatusMethodNotAllowed, codeUnsupportedHTTPVerb, "The X-HTTP-Method %q is not supported.", o)
		}
	}
	if req.query.Has("comp") || req.query.Has("restype") {
		return newErr(http.StatusNotImplemented, codeNotImplemented, "Service properties, statistics and table access policies are not supported (as on Cosmos DB's Table API).")
	}
	res := req.resource
	switch {
	case res == "Tables" || res == "Tables()":
		switch method {
		case http.MethodGet:
			if err := req.allow(tableauth.QueryTables, ""); err != nil {
				return err
			}
			return s.queryTables(req, "")
		case http.MethodPost:
			if err := req.allow(tableauth.CreateTable, ""); err != nil {
				return err
			}
			return s.createTable(req)
		}
		return errVerb(method, "Tables")
	case strings.HasPrefix(res, "Tables("):
		name, err := parseTableName(res)
		if err != nil {
			return err
		}
		switch method {
		case http.MethodDelete:
			if err := req.allow(tableauth.DeleteTable, name); err != nil {
				return err
			}
			return s.deleteTable(req, name)
		case http.MethodGet:
			if err := req.allow(tableauth.QueryTables, name); err != nil {
				return err
			}
			return s.queryTables(req, name)
		}
		return errVerb(method, "a table")
	case res == "$batch":
		if method != http.MethodPost {
			return errVerb(method, "$batch")
		}
		return s.batch(req)
	}
	table, keys, err := parseEntityPath(res)
	if err != nil {
		return err
	}
	if keys == nil {
		switch method {
		case http.MethodGet:
			if err := req.allow(tableauth.QueryEntities, table); err != nil {
				return err
			}
			return s.queryEntities(req, table)
		case http.MethodPost:
			return s.insertEntity(req, table)
		}
		return errVerb(method, "a table's entities")
	}
	var action tableauth.Action
	switch method {
	case http.MethodGet:
		action = tableauth.QueryEntities
	case http.MethodPut, http.MethodPatch, "MERGE":
		action = updateAction(r.Header.Get("If-Match"))
	case http.MethodDelete:
		action = tableauth.DeleteEntity
	default:
		return errVerb(method, "an entity")
	}
	if err := req.allowEntity(action, table, keys[0], keys[1]); err != nil {
		return err
	}
	switch method {
	case http.MethodGet:
		return s.getEntity(req, table, keys[0], keys[1])
	case http.MethodPut:
		return s.updateEntity(req, table, keys[0], keys[1], false)
	case http.MethodPatch, "MERGE":
		return s.updateEntity(req, table, keys[0], keys[1], true)
	case http.MethodDelete:
		return s.deleteEntity(req, table, keys[0], keys[1])
	}
	return errVerb(method, "an entity")
}

func errVerb(method, what string) error {
	return newErr(http.StatusMethodNotAllowed, codeUnsupportedHTTPVerb, "The HTTP verb %s is not supported on %s.", method, what)
}

// metadataOf reads the metadata level from $format or Accept
// (minimal when neither names one).
func metadataOf(r *http.Request) metadata {
	a := r.URL.Query().Get("$format")
	if a == "" {
		a = r.Header.Get("Accept")
	}
	switch {
	case strings.Contains(a, "odata=nometadata"):
		return noMetadata
	case strings.Contains(a, "odata=fullmetadata"):
		return fullMetadata
	}
	return minimalMetadata
}

// parseTableName reads Tables('name').
func parseTableName(res string) (string, error) {
	inner, ok := strings.CutPrefix(res, "Tables(")
	if ok {
		inner, ok = strings.CutSuffix(inner, ")")
	}
	if !ok || len(inner) < 2 || inner[0] != '\'' || inner[len(inner)-1] != '\'' {
		return "", errInput("The table address %q is not Tables('name').", res)
	}
	return strings.ReplaceAll(inner[1:len(inner)-1], "''", "'"), nil
}

// parseEntityPath reads "t", "t()" (keys nil) or
// "t(PartitionKey='a',RowKey='b')" (keys [pk, rk]), with ” standing for
// a quote inside a key.
func parseEntityPath(res string) (string, []string, error) {
	i := strings.IndexByte(res, '(')
	if i < 0 {
		return res, nil, nil
	}
	table, args := res[:i], res[i+1:]
	args, ok := strings.CutSuffix(args, ")")
	if !ok {
		return "", nil, errInput("The resource %q has no closing parenthesis.", res)
	}
	if args == "" {
		return table, nil, nil
	}
	vals := map[string]string{}
	for len(args) > 0 {
		eq := strings.IndexByte(args, '=')
		if eq < 0 || len(vals) == 2 {
			return "", nil, errInput("The entity address %q is not (PartitionKey='…',RowKey='…').", res)
		}
		name := strings.TrimSpace(args[:eq])
		rest := args[eq+1:]
		if len(rest) == 0 || rest[0] != '\'' {
			return "", nil, errInput("The key %s of %q is not a quoted string.", name, res)
		}
		var b strings.Builder
		j := 1
		closed := false
		for j < len(rest) {
			if rest[j] == '\'' {
				if j+1 < len(rest) && rest[j+1] == '\'' {
					b.WriteByte('\'')
					j += 2
					continue
				}
				closed = true
				j++
				break
			}
			b.WriteByte(rest[j])
			j++
		}
		if !closed {
			return "", nil, errInput("The key %s of %q has no closing quote.", name, res)
		}
		if name != "PartitionKey" && name != "RowKey" {
			return "", nil, errInput("The entity address %q names %q; only PartitionKey and RowKey address an entity.", res, name)
		}
		if _, dup := vals[name]; dup {
			return "", nil, errInput("The entity address %q gives %s twice.", res, name)
		}
		vals[name] = b.String()
		args = strings.TrimLeft(rest[j:], " ")
		if strings.HasPrefix(args, ",") {
			args = args[1:]
		} else if args != "" {
			return "", nil, errInput("The entity address %q is not (PartitionKey='…',RowKey='…').", res)
		}
	}
	pk, okp := vals["PartitionKey"]
	rk, okr := vals["RowKey"]
	if !okp || !okr {
		return "", nil, errInput("The entity address %q must give both PartitionKey and RowKey.", res)
	}
	return table, []string{pk, rk}, nil
}

// readBody reads the request body.
func readBody(req *request) ([]byte, error) {
	b, err := io.ReadAll(req.r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, newErr(http.StatusRequestEntityTooLarge, codeRequestBodyTooLarge, "The request body is larger than %d bytes.", maxBodyBytes)
		}
		return nil, errInput("cannot read the request body: %v", err)
	}
	return b, nil
}

// headers sets the headers every response has.
func (s *Server) headers(req *request) {
	h := req.w.Header()
	h.Set("x-ms-request-id", req.id)
	v := req.r.Header.Get("x-ms-version")
	if v == "" {
		v = "2019-02-02"
	}
	h.Set("x-ms-version", v)
	h.Set("Date", s.now().UTC().Format(http.TimeFormat))
	h.Set("DataServiceVersion", "3.0;")
	h.Set("x-ms-request-charge", strconv.FormatFloat(req.charge, 'f', 2, 64))
	if c := req.r.Header.Get("x-ms-client-request-id"); c != "" {
		h.Set("x-ms-client-request-id", c)
	}
}

// contentType is the JSON content type of a response at metadata m.
func contentType(m metadata) string {
	switch m {
	case noMetadata:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case fullMetadata:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// writeJSON answers status with a JSON body.
func (s *Server) writeJSON(req *request, status int, body []byte) {
	s.headers(req)
	req.w.Header().Set("Content-Type", contentType(req.meta))
	req.w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	req.w.WriteHeader(status)
	_, _ = req.w.Write(body)
}

// writeNoContent answers 204.
func (s *Server) writeNoContent(req *request) {
	s.headers(req)
	req.w.WriteHeader(http.StatusNoContent)
}

func (s *Server) writeError(req *request, err error) {
	te := toTableError(err)
	if te.status == http.StatusInternalServerError && s.cfg.Log != nil {
		s.cfg.Log.Printf("table: %s %s: %v", req.r.Method, req.r.URL.Path, err)
	}
	s.headers(req)
	h := req.w.Header()
	h.Set("x-ms-error-code", te.code)
	if ra := retryAfterMs(err); ra != "" {
		h.Set("x-ms-retry-after-ms", ra)
		h.Set("Retry-After", strconv.FormatInt((mustAtoi(ra)+999)/1000, 10))
	}
	body := errorBody(te, req.id)
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	req.w.WriteHeader(te.status)
	_, _ = req.w.Write(body)
}

func mustAtoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// preference reads Prefer: return-no-content / return-content; def is the
// operation's default.
func preference(r *http.Request, def bool) (content bool, applied string) {
	switch p := strings.ToLower(r.Header.Get("Prefer")); {
	case strings.Contains(p, "return-no-content"):
		return false, "return-no-content"
	case strings.Contains(p, "return-content"):
		return true, "return-content"
	}
	return def, ""
}
