package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/index"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/throughput"
)

// readBody reads a request body of at most engine.MaxItemBytes.
func readBody(req *request) ([]byte, error) {
	if req.r.ContentLength > engine.MaxItemBytes {
		return nil, fmt.Errorf("%w: the request body is %d bytes; the limit is %d bytes", engine.ErrTooLarge, req.r.ContentLength, engine.MaxItemBytes)
	}
	b, err := io.ReadAll(io.LimitReader(req.r.Body, engine.MaxItemBytes+1))
	if err != nil {
		return nil, errBadRequest("cannot read the request body: %v", err)
	}
	if len(b) > engine.MaxItemBytes {
		return nil, fmt.Errorf("%w: the request body exceeds the limit of %d bytes", engine.ErrTooLarge, engine.MaxItemBytes)
	}
	req.body = b // kept to send the request on to another node (forward.go)
	return b, nil
}

// decodeStrict decodes a metadata body into v with a clear error.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errBadRequest("the request body is empty; a JSON object is required")
	}
	// The document rules first: encoding/json would silently turn invalid
	// UTF-8 into U+FFFD, keep the last of repeated names and nest without
	// bound. A query body wraps parameter values, which query.go checks
	// one by one.
	if err := jsondoc.ValidateEnvelope(body); err != nil {
		return errBadRequest("the request body is not valid: %v", err)
	}
	// An id keys its resource: one that encoding/json would decode to
	// U+FFFD is refused instead, so that distinct ids never meet.
	var id struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &id) == nil {
		if u := jsondoc.UnpairedSurrogate(id.ID); u != "" {
			return errBadRequest("the id %s contains %s, a UTF-16 surrogate without its pair; ids must be valid Unicode text", id.ID, u)
		}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errBadRequest("the request body is not a valid JSON object: %v", err)
	}
	return nil
}

// offeredThroughput reads x-ms-offer-throughput and the autoscale header.
func offeredThroughput(r *http.Request) (engine.Throughput, error) {
	var t engine.Throughput
	if v := r.Header.Get("x-ms-offer-throughput"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return t, errBadRequest("x-ms-offer-throughput must be an integer number of RU/s, not %q", v)
		}
		t.RUs = n
	}
	if v := r.Header.Get("x-ms-cosmos-offer-autopilot-settings"); v != "" {
		var a struct {
			MaxThroughput int `json:"maxThroughput"`
		}
		if err := json.Unmarshal([]byte(v), &a); err != nil || a.MaxThroughput <= 0 {
			return t, errBadRequest("x-ms-cosmos-offer-autopilot-settings must be JSON such as {\"maxThroughput\":4000}, not %q", v)
		}
		t.AutoscaleMax = a.MaxThroughput
	}
	return t, nil
}

func renderDatabase(d engine.DatabaseInfo) map[string]any {
	return map[string]any{
		"id": d.ID, "_rid": d.Rid, "_self": "dbs/" + d.Rid + "/", "_etag": d.Etag(),
		"_colls": "colls/", "_users": "users/", "_ts": d.Ts,
	}
}

// databases runs an operation on the databases feed or a database (see
// classify).
func (s *Server) databases(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	switch op.kind {
	case opListDatabases, opQueryDatabases:
		dbs := s.engine.Databases()
		list := make([]any, len(dbs))
		for i, d := range dbs {
			list[i] = renderDatabase(d)
		}
		if op.kind == opQueryDatabases {
			return s.queryFeed(req, "", "Databases", list)
		}
		s.writeFeed(req, "", "Databases", list)
	case opCreateDatabase:
		return s.createDatabase(req)
	case opReadDatabase:
		d, err := s.engine.Database(op.db)
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, d.Etag(), renderDatabase(d))
	case opDeleteDatabase:
		if err := s.engine.DeleteDatabase(op.db); err != nil {
			return err
		}
		s.writeJSON(req, http.StatusNoContent, nil)
	default:
		panic("BUG: databases called for " + op.kind.String())
	}
	return nil
}

func (s *Server) createDatabase(req *request) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	var in struct {
		ID *string `json:"id"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return err
	}
	if in.ID == nil {
		return errBadRequest("the database has no \"id\" property")
	}
	t, err := offeredThroughput(req.r)
	if err != nil {
		return err
	}
	d, err := s.engine.CreateDatabase(*in.ID, t)
	if err != nil {
		return err
	}
	s.writeResource(req, http.StatusCreated, d.Etag(), renderDatabase(d))
	return nil
}

// containerBody is the JSON of a container as clients send it.
type containerBody struct {
	ID           *string `json:"id"`
	PartitionKey *struct {
		Paths     []string `json:"paths"`
		Kind      string   `json:"kind"`
		Version   int      `json:"version"`
		SystemKey *bool    `json:"systemKey,omitempty"`
	} `json:"partitionKey"`
	IndexingPolicy json.RawMessage `json:"indexingPolicy"`
	DefaultTTL     *json.Number    `json:"defaultTtl"`
	// SyntheticKey is Parsec's extension: the partition key as a key
	// expression (package synthkey), computed by the server on writes.
	SyntheticKey *string `json:"parsecSyntheticKey"`
}

// systemContainerFields are the properties of a container body that the
// server owns or models itself; the rest are echoed verbatim.
var systemContainerFields = map[string]bool{
	"id": true, "partitionKey": true, "indexingPolicy": true, "defaultTtl": true, "parsecSyntheticKey": true,
	"_rid": true, "_self": true, "_etag": true, "_ts": true, "_docs": true, "_sprocs": true,
	"_triggers": true, "_udfs": true, "_conflicts": true,
}

func parseContainer(body []byte) (engine.ContainerSpec, error) {
	var spec engine.ContainerSpec
	var in containerBody
	if err := decodeStrict(body, &in); err != nil {
		return spec, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(body, &all); err != nil {
		return spec, errBadRequest("the request body is not a valid JSON object: %v", err)
	}
	if in.ID == nil {
		return spec, errBadRequest("the container has no \"id\" property")
	}
	spec.ID = *in.ID
	if len(bytes.TrimSpace(in.IndexingPolicy)) > 0 {
		// Stored and returned as the service normalises it: the legacy
		// form read, the defaults filled in (an empty policy is the
		// default one).
		p, err := index.Normalize(in.IndexingPolicy)
		if err != nil {
			return spec, errBadRequest("%v", err)
		}
		in.IndexingPolicy = p
	}
	if in.PartitionKey == nil || len(in.PartitionKey.Paths) == 0 || in.PartitionKey.SystemKey != nil && *in.PartitionKey.SystemKey {
		// A fixed container (the 2017 model): one partition, never split.
		// Its definition as this server reads it back (systemKey) names
		// it too.
		spec.IndexingPolicy = in.IndexingPolicy
		return spec, parseContainerRest(&spec, in, all)
	}
	pk := epk.Definition{Kind: in.PartitionKey.Kind, Version: in.PartitionKey.Version, Paths: in.PartitionKey.Paths}
	if pk.Kind == "" {
		pk.Kind = "Hash"
		if len(pk.Paths) > 1 {
			pk.Kind = "MultiHash"
		}
	}
	if pk.Version == 0 {
		pk.Version = 2
	}
	spec.PartitionKey = pk
	spec.IndexingPolicy = in.IndexingPolicy
	return spec, parseContainerRest(&spec, in, all)
}

func parseContainerRest(spec *engine.ContainerSpec, in containerBody, all map[string]json.RawMessage) error {
	if in.SyntheticKey != nil {
		spec.SyntheticKey = *in.SyntheticKey
	}
	if in.DefaultTTL != nil {
		n, err := in.DefaultTTL.Int64()
		if err != nil {
			return errBadRequest("defaultTtl must be an integer number of seconds, not %s", *in.DefaultTTL)
		}
		spec.DefaultTTL = &n
	}
	for k, v := range all {
		if !systemContainerFields[k] {
			if spec.Extra == nil {
				spec.Extra = map[string]json.RawMessage{}
			}
			spec.Extra[k] = v
		}
	}
	return nil
}

func renderContainer(db engine.DatabaseInfo, c engine.ContainerInfo) map[string]any {
	out := map[string]any{
		"conflictResolutionPolicy": map[string]any{"mode": "LastWriterWins", "conflictResolutionPath": "/_ts", "conflictResolutionProcedure": ""},
		"geospatialConfig":         map[string]any{"type": "Geography"},
	}
	for k, v := range c.Extra {
		out[k] = v
	}
	out["id"] = c.ID
	out["indexingPolicy"] = c.IndexingPolicy
	if c.Fixed {
		// As the service shows a container created without a partition
		// key: the system key the SDKs route with (every item has none,
		// so every request goes to the one partition).
		out["partitionKey"] = map[string]any{"paths": []string{"/_partitionKey"}, "kind": "Hash", "systemKey": true}
	} else {
		out["partitionKey"] = map[string]any{"paths": c.PartitionKey.Paths, "kind": c.PartitionKey.Kind, "version": c.PartitionKey.Version}
	}
	if c.DefaultTTL != nil {
		out["defaultTtl"] = *c.DefaultTTL
	}
	if c.SyntheticKey != "" {
		out["parsecSyntheticKey"] = c.SyntheticKey
	}
	out["_rid"] = c.Rid
	out["_ts"] = c.Ts
	out["_self"] = "dbs/" + db.Rid + "/colls/" + c.Rid + "/"
	out["_etag"] = c.Etag()
	out["_docs"] = "docs/"
	out["_sprocs"] = "sprocs/"
	out["_triggers"] = "triggers/"
	out["_udfs"] = "udfs/"
	out["_conflicts"] = "conflicts/"
	return out
}

// containers runs an operation on a containers feed or a container (see
// classify).
func (s *Server) containers(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	db, err := s.engine.Database(op.db)
	if err != nil {
		return err
	}
	switch op.kind {
	case opListContainers, opQueryContainers:
		cs, err := s.engine.Containers(op.db)
		if err != nil {
			return err
		}
		list := make([]any, len(cs))
		for i, c := range cs {
			list[i] = renderContainer(db, c)
		}
		if op.kind == opQueryContainers {
			return s.queryFeed(req, db.Rid, "DocumentCollections", list)
		}
		s.writeFeed(req, db.Rid, "DocumentCollections", list)
	case opCreateContainer:
		body, err := readBody(req)
		if err != nil {
			return err
		}
		spec, err := parseContainer(body)
		if err != nil {
			return err
		}
		t, err := offeredThroughput(req.r)
		if err != nil {
			return err
		}
		c, err := s.engine.CreateContainer(op.db, spec, t)
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusCreated, c.Etag(), renderContainer(db, c))
	case opReadContainer:
		c, err := s.engine.Container(op.db, op.coll)
		if err != nil {
			return err
		}
		containerReadHeaders(req.w.Header(), c)
		s.writeResource(req, http.StatusOK, c.Info().Etag(), renderContainer(db, c.Info()))
	case opReplaceContainer:
		body, err := readBody(req)
		if err != nil {
			return err
		}
		spec, err := parseContainer(body)
		if err != nil {
			return err
		}
		if spec.ID != op.coll {
			return errBadRequest("the id in the body, %q, does not match the container addressed, %q", spec.ID, op.coll)
		}
		c, err := s.engine.ReplaceContainer(op.db, spec, req.r.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, c.Etag(), renderContainer(db, c))
	case opDeleteContainer:
		if err := s.engine.DeleteContainer(op.db, op.coll); err != nil {
			return err
		}
		s.writeJSON(req, http.StatusNoContent, nil)
	default:
		panic("BUG: containers called for " + op.kind.String())
	}
	return nil
}

// writeResource sends one metadata resource with its etag.
func (s *Server) writeResource(req *request, status int, etag string, v any) {
	if status == http.StatusOK && s.notModified(req, etag) {
		return
	}
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot encode resource: %v", err))
	}
	req.w.Header().Set("etag", etag)
	s.writeJSON(req, status, body)
}

// notModified answers 304 to a read whose If-None-Match is the resource's
// current etag (or *), as the service does for every resource read, and
// reports whether it did.
func (s *Server) notModified(req *request, etag string) bool {
	inm := req.r.Header.Get("If-None-Match")
	if req.r.Method != http.MethodGet || inm == "" || inm != etag && inm != "*" {
		return false
	}
	req.w.Header().Set("etag", etag)
	s.writeJSON(req, http.StatusNotModified, nil)
	return true
}

// writeFeed sends a feed envelope {"_rid", key: [...], "_count"}.
func (s *Server) writeFeed(req *request, rid, key string, list []any) {
	body, err := json.Marshal(map[string]any{"_rid": rid, key: list, "_count": len(list)})
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot encode feed: %v", err))
	}
	req.w.Header().Set("x-ms-item-count", strconv.Itoa(len(list)))
	s.writeJSON(req, http.StatusOK, body)
}

// containerReadHeaders sets the headers of a container read that the SDKs
// read: the index transformation progress (100 once the index of the
// current policy is built, 0 while it is being built) and, as the service
// sends them, the container's quota and usage (sizes in KB; -1: no limit).
func containerReadHeaders(h http.Header, c *engine.Container) {
	progress := "100"
	if c.Info().IndexBuilding {
		progress = "0"
	}
	h.Set("x-ms-documentdb-collection-index-transformation-progress", progress)
	count := func(k engine.ScriptKind) string {
		l, _ := c.Scripts(k)
		return strconv.Itoa(len(l))
	}
	items, bytes := c.Usage()
	kb := strconv.FormatInt((bytes+1023)/1024, 10)
	size := "-1"
	if m := c.MaxBytes(); m > 0 {
		size = strconv.FormatInt(m/1024, 10)
	}
	quota := func(k engine.ScriptKind) string { return strconv.Itoa(engine.ScriptQuota[k]) }
	h.Set("x-ms-resource-quota", "functions="+quota(engine.UserFunction)+";storedProcedures="+quota(engine.StoredProcedure)+
		";triggers="+quota(engine.Trigger)+";documentSize="+strconv.Itoa(engine.MaxItemBytes/1024)+
		";documentsSize="+size+";documentsCount=-1;collectionSize="+size+";")
	h.Set("x-ms-resource-usage", "functions="+count(engine.UserFunction)+";storedProcedures="+count(engine.StoredProcedure)+
		";triggers="+count(engine.Trigger)+";documentSize=0;documentsSize="+kb+";documentsCount="+strconv.FormatInt(items, 10)+
		";collectionSize="+kb+";")
}
