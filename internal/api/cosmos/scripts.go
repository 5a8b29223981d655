package cosmos

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// scriptFeeds names, per feed segment, the script kind and the property
// that holds the list in a feed response.
var scriptFeeds = map[string]struct {
	kind engine.ScriptKind
	list string
}{
	"sprocs":   {engine.StoredProcedure, "StoredProcedures"},
	"triggers": {engine.Trigger, "Triggers"},
	"udfs":     {engine.UserFunction, "UserDefinedFunctions"},
}

// Trigger headers: the triggers a write runs, comma-separated. The keys
// are canonical, so that every write looks them up without canonicalizing.
const (
	hdrPreTriggers  = "X-Ms-Documentdb-Pre-Trigger-Include"
	hdrPostTriggers = "X-Ms-Documentdb-Post-Trigger-Include"
)

// Script logging: a procedure's console.log output is returned, URL
// encoded, when the request asks for it.
const (
	hdrScriptLogging = "x-ms-documentdb-script-enable-logging"
	hdrScriptLog     = "x-ms-documentdb-script-log-results"
)

// scripts runs an operation on a container's scripts (see classifyScripts).
func (s *Server) scripts(req *request, op operation) error {
	c, err := s.openContainer(req, op.db, op.coll)
	if err != nil {
		return err
	}
	feed := scriptFeeds[op.scripts]
	req.charge = throughput.MetadataCharge
	info := c.Info()
	switch op.kind {
	case opListScripts, opQueryScripts:
		list, err := c.Scripts(feed.kind)
		if err != nil {
			return err
		}
		docs := make([][]byte, len(list))
		for i, sc := range list {
			docs[i] = renderScript(info, sc)
		}
		if op.kind == opQueryScripts {
			plan, _, err := readQuery(req, nil)
			if err != nil {
				return err
			}
			if docs, err = engine.QueryDocuments(plan, docs); err != nil {
				return err
			}
		}
		out := make([]any, len(docs))
		for i, d := range docs {
			out[i] = json.RawMessage(d)
		}
		s.writeFeed(req, info.Rid, feed.list, out)
		return nil
	case opCreateScript, opReplaceScript:
		spec, err := readScriptSpec(req, feed.kind)
		if err != nil {
			return err
		}
		var sc engine.ScriptInfo
		status := http.StatusCreated
		if op.kind == opCreateScript {
			sc, err = c.CreateScript(feed.kind, spec)
		} else {
			if spec.ID != op.id {
				return errBadRequest("the %s's id, %q, does not match the id in the request path, %q", feed.kind, spec.ID, op.id)
			}
			sc, err = c.ReplaceScript(feed.kind, spec, req.r.Header.Get("If-Match"))
			status = http.StatusOK
		}
		if err != nil {
			return err
		}
		req.w.Header().Set("etag", sc.Etag())
		s.writeJSON(req, status, renderScript(info, sc))
		return nil
	case opReadScript:
		sc, err := c.Script(feed.kind, op.id)
		if err != nil {
			return err
		}
		req.w.Header().Set("etag", sc.Etag())
		if s.notModified(req, sc.Etag()) {
			return nil
		}
		s.writeJSON(req, http.StatusOK, renderScript(info, sc))
		return nil
	case opDeleteScript:
		if err := c.DeleteScript(feed.kind, op.id); err != nil {
			return err
		}
		s.writeJSON(req, http.StatusNoContent, nil)
		return nil
	case opExecuteProcedure:
		return s.executeProcedure(req, c, op.id)
	}
	panic("BUG: scripts called for " + op.kind.String())
}

// readScriptSpec reads the body of a script create or replace.
func readScriptSpec(req *request, kind engine.ScriptKind) (engine.ScriptSpec, error) {
	var spec engine.ScriptSpec
	body, err := readBody(req)
	if err != nil {
		return spec, err
	}
	var in struct {
		ID               *string `json:"id"`
		Body             *string `json:"body"`
		TriggerType      string  `json:"triggerType"`
		TriggerOperation string  `json:"triggerOperation"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return spec, err
	}
	if in.ID == nil {
		return spec, errBadRequest("the %s has no \"id\" property", kind)
	}
	if in.Body == nil {
		return spec, errBadRequest("the %s has no \"body\" property (its JavaScript source)", kind)
	}
	spec = engine.ScriptSpec{ID: *in.ID, Body: *in.Body, TriggerType: in.TriggerType, TriggerOperation: in.TriggerOperation}
	if kind != engine.Trigger {
		spec.TriggerType, spec.TriggerOperation = "", ""
	}
	return spec, nil
}

// renderScript is a script's JSON as the SDKs read it.
func renderScript(info engine.ContainerInfo, sc engine.ScriptInfo) []byte {
	out := map[string]any{
		"id": sc.ID, "body": sc.Body, "_rid": sc.Rid, "_self": sc.Self(info),
		"_etag": sc.Etag(), "_ts": sc.Ts,
	}
	if sc.Kind == engine.Trigger {
		out["triggerType"] = sc.TriggerType
		out["triggerOperation"] = sc.TriggerOperation
	}
	b, _ := json.Marshal(out)
	return b
}

// scriptEnv is what a script run needs of this layer: the status code a
// script sees as a failed operation's number.
var scriptEnv = engine.ScriptEnv{Status: func(err error) int {
	st, _, _ := statusOf(err)
	return st
}}

// executeProcedure runs a stored procedure: the body is the JSON array of
// its parameters (or empty), the partition key is the header's.
func (s *Server) executeProcedure(req *request, c *engine.Container, id string) error {
	body, err := readBody(req)
	if err != nil {
		return err
	}
	var args []byte
	if t := strings.TrimSpace(string(body)); t != "" && t != "null" {
		var arr []json.RawMessage
		if err := decodeStrict(body, &arr); err != nil {
			return errBadRequest("the parameters of a stored procedure must be a JSON array: %v", messageOf(err))
		}
		args = body
	}
	key, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	res, err := c.ExecuteProcedure(id, key, has, args, scriptEnv)
	req.charge = res.Charge
	req.itemSession(res.Session)
	if err != nil {
		return withKeyHeader(err)
	}
	if headerBool(req.r, hdrScriptLogging) && res.Log != "" {
		req.w.Header().Set(hdrScriptLog, strings.ReplaceAll(url.QueryEscape(res.Log), "+", "%20"))
	}
	s.writeJSON(req, http.StatusOK, res.Body)
	return nil
}

// triggerNames reads a trigger header.
func triggerNames(r *http.Request, name string) []string {
	var out []string
	for _, v := range r.Header[name] {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				out = append(out, n)
			}
		}
	}
	return out
}

// executeWithTriggers runs a write with the triggers its headers name; ok
// is false when they name none.
// hasTriggers reports whether the request names pre- or post-triggers.
func hasTriggers(r *http.Request) bool {
	return len(triggerNames(r, hdrPreTriggers)) > 0 || len(triggerNames(r, hdrPostTriggers)) > 0
}

func (s *Server) executeWithTriggers(req *request, c *engine.Container, op engine.Op) (ok bool, err error) {
	pre, post := triggerNames(req.r, hdrPreTriggers), triggerNames(req.r, hdrPostTriggers)
	if len(pre) == 0 && len(post) == 0 {
		return false, nil
	}
	res, err := c.WriteWithTriggers(op, pre, post, scriptEnv)
	req.charge = res.Charge
	req.itemSession(res.Session)
	if err != nil {
		return true, err
	}
	return true, s.writeOpResult(req, op, res.Op)
}
