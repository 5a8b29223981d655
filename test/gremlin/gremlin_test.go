package gremlin

import (
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
)

var readOnlyKey = base64.StdEncoding.EncodeToString([]byte("the read-only key of the gremlin end-to-end tests"))

// start runs the server in memory with the Gremlin API on a free loopback
// port and creates the graphs: "modern" and "crew" (partition key /name,
// 40,000 RU/s over four physical partitions) and "hot" (/pk, 400 RU/s,
// throttled).
func start(t *testing.T) (*server.Server, string) {
	t.Helper()
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0", GremlinListen: "127.0.0.1:0", ReadOnlyKey: readOnlyKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(t.Context()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	e := s.Engine()
	if _, err := e.CreateDatabase("graphdb", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id, path string
		rus      int
	}{{"modern", "/name", 40000}, {"crew", "/name", 40000}, {"hot", "/pk", 400}, {"byid", "/id", 400}} {
		spec := engine.ContainerSpec{ID: c.id, PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{c.path}}}
		if _, err := e.CreateContainer("graphdb", spec, engine.Throughput{RUs: c.rus}); err != nil {
			t.Fatal(err)
		}
	}
	return s, s.GremlinURL()
}

func client(t *testing.T, url, graph, key string) *gremlingo.Client {
	t.Helper()
	c, err := gremlingo.NewClient(url, func(s *gremlingo.ClientSettings) {
		s.AuthInfo = gremlingo.BasicAuthInfo("/dbs/graphdb/colls/"+graph, key)
		s.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// submit runs a script and returns its results and status attributes.
func submit(t *testing.T, c *gremlingo.Client, script string, bindings ...map[string]any) ([]any, map[string]any, error) {
	t.Helper()
	var rs gremlingo.ResultSet
	var err error
	if len(bindings) > 0 {
		rs, err = c.Submit(script, bindings[0])
	} else {
		rs, err = c.Submit(script)
	}
	if err != nil {
		return nil, nil, err
	}
	results, err := rs.All()
	if err != nil {
		return nil, nil, err
	}
	out := make([]any, len(results))
	for i, r := range results {
		out[i] = r.GetInterface()
	}
	return out, rs.GetStatusAttributes(), nil
}

func must(t *testing.T, c *gremlingo.Client, script string, bindings ...map[string]any) []any {
	t.Helper()
	out, _, err := submit(t, c, script, bindings...)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out
}

// loadModern loads TinkerPop's "modern" toy graph (tinkerpop docs,
// reference "The Graph Computer" / gremlin-server data/tinkerpop-modern):
// six vertices and six edges, the vertex ids "1".."6", the edge ids
// "7".."12", each vertex in the logical partition of its name.
func loadModern(t *testing.T, c *gremlingo.Client) {
	t.Helper()
	for _, v := range []struct{ id, label, name, prop string }{
		{"1", "person", "marko", "age:29"}, {"2", "person", "vadas", "age:27"}, {"3", "software", "lop", "lang:java"},
		{"4", "person", "josh", "age:32"}, {"5", "software", "ripple", "lang:java"}, {"6", "person", "peter", "age:35"},
	} {
		k, val, _ := strings.Cut(v.prop, ":")
		script := fmt.Sprintf("g.addV(%q).property('id', %q).property('name', %q).property(%q, %s)", v.label, v.id, v.name, k, lit(val))
		must(t, c, script)
	}
	for _, e := range []struct{ id, out, outName, label, in, inName, weight string }{
		{"7", "1", "marko", "knows", "2", "vadas", "0.5d"}, {"8", "1", "marko", "knows", "4", "josh", "1.0d"},
		{"9", "1", "marko", "created", "3", "lop", "0.4d"}, {"10", "4", "josh", "created", "5", "ripple", "1.0d"},
		{"11", "4", "josh", "created", "3", "lop", "0.4d"}, {"12", "6", "peter", "created", "3", "lop", "0.2d"},
	} {
		// The ends addressed as [pk, id], in the Cosmos quickstart's
		// to(g.V(...)) form, here with bindings (named so as not to
		// shadow the tokens id and label).
		must(t, c, "g.V([src_pk, src]).addE(lbl).to(g.V([dst_pk, dst])).property('id', eid).property('weight', "+e.weight+")",
			map[string]any{"src_pk": e.outName, "src": e.out, "dst_pk": e.inName, "dst": e.in, "lbl": e.label, "eid": e.id})
	}
}

func lit(v string) string {
	if v == "java" {
		return "'java'"
	}
	return v
}

func strs(t *testing.T, vs []any) []string {
	t.Helper()
	out := make([]string, len(vs))
	for i, v := range vs {
		s, ok := v.(string)
		if !ok {
			t.Fatalf("result %d is %T %v, want a string", i, v, v)
		}
		out[i] = s
	}
	return out
}

func sorted(ss []string) string {
	sort.Strings(ss)
	return strings.Join(ss, ",")
}

func count(t *testing.T, vs []any) int64 {
	t.Helper()
	if len(vs) != 1 {
		t.Fatalf("got %v, want one count", vs)
	}
	n, ok := vs[0].(int64)
	if !ok {
		t.Fatalf("count is %T %v, want int64", vs[0], vs[0])
	}
	return n
}

// TestModernScripts runs scripts over the modern graph; the expected
// answers are those of the TinkerPop reference documentation's examples
// over the same graph.
func TestModernScripts(t *testing.T) {
	_, url := start(t)
	c := client(t, url, "modern", auth.EmulatorKey)
	loadModern(t, c)

	if n := count(t, must(t, c, "g.V().count()")); n != 6 {
		t.Errorf("g.V().count() = %d, want 6", n)
	}
	if n := count(t, must(t, c, "g.E().count()")); n != 6 {
		t.Errorf("g.E().count() = %d, want 6", n)
	}
	for _, tc := range []struct{ script, want string }{
		{"g.V().hasLabel('person').values('name')", "josh,marko,peter,vadas"},
		{"g.V(['marko','1']).out('knows').values('name')", "josh,vadas"},
		{"g.V(['marko','1']).out('created').values('name')", "lop"},
		{"g.V(['lop','3']).in('created').values('name')", "josh,marko,peter"},
		{"g.V().has('person','age',gt(30)).values('name')", "josh,peter"},
		{"g.V(['marko','1']).out().out().values('name')", "lop,ripple"},
		{"g.V(['marko','1']).outE('knows').has('weight', gt(0.6d)).inV().values('name')", "josh"},
		{"g.V('1').has('name','marko').both().values('name')", "josh,lop,vadas"},
		{"g.V(['josh','4']).out('created').in('created').dedup().values('name')", "josh,marko,peter"},
	} {
		if got := sorted(strs(t, must(t, c, tc.script))); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.script, got, tc.want)
		}
	}
	// Numbers keep their type through storage and queries: a weight
	// written 1.0d is a Double (GraphBinary type 0x07) whichever read path
	// served it, an age written 29 a Long.
	for _, script := range []string{"g.E().hasLabel('knows').values('weight')", "g.V(['marko','1']).outE('knows').values('weight')", "g.E('8').values('weight')"} {
		ws := must(t, c, script)
		var ones int
		for _, w := range ws {
			f, ok := w.(float64)
			if !ok {
				t.Errorf("%s: %T %v, want float64", script, w, w)
			}
			if f == 1.0 {
				ones++
			}
		}
		if ones != 1 {
			t.Errorf("%s = %v, want one weight of 1.0", script, ws)
		}
	}
	if ages := must(t, c, "g.V().has('name', 'marko').values('age')"); len(ages) != 1 || ages[0] != int64(29) {
		t.Errorf("marko's age = %#v, want int64 29", ages)
	}
	// Ordered answers.
	if got := strings.Join(strs(t, must(t, c, "g.V().hasLabel('person').order().by('age', desc).values('name')")), ","); got != "peter,josh,marko,vadas" {
		t.Errorf("persons by age desc = %s", got)
	}
	// A map: groupCount by label.
	got := must(t, c, "g.V().groupCount().by(label)")
	if len(got) != 1 {
		t.Fatalf("groupCount: %v", got)
	}
	m, ok := got[0].(map[any]any)
	if !ok || m["person"] != int64(4) || m["software"] != int64(2) {
		t.Errorf("groupCount().by(label) = %#v, want person 4, software 2", got[0])
	}
	// Vertices come back as vertices, with their ids and labels.
	vs := must(t, c, "g.V(['marko','1'])")
	if v, ok := vs[0].(*gremlingo.Vertex); len(vs) != 1 || !ok || v.Id != "1" || v.Label != "person" {
		t.Errorf("g.V(['marko','1']) = %#v", vs)
	}
	// A syntax error is 597 (gremlin-go masks the code with 0xFF: 85).
	if _, _, err := submit(t, c, "g.V().out("); err == nil || !strings.Contains(err.Error(), "syntax") {
		t.Errorf("a script that does not parse: %v", err)
	}
	// 130 results come in three responses (64, 64 and 2: 206, 206,
	// 200), which the driver joins.
	for i := range 130 {
		must(t, c, "g.addV('item').property('id', vid).property('name', vname).property('n', vn)",
			map[string]any{"vid": fmt.Sprintf("i%d", i), "vname": fmt.Sprintf("item%d", i%7), "vn": int32(i)})
	}
	ns, attrs, err := submit(t, c, "g.V().hasLabel('item').values('n')")
	if err != nil {
		t.Fatal(err)
	}
	// The charge is counted once, in the first batch's
	// x-ms-request-charge; the final batch's carries none and its
	// x-ms-total-request-charge is the request's whole charge.
	if total, ok := attrs["x-ms-total-request-charge"].(float64); !ok || total <= 0 || attrs["x-ms-request-charge"] != 0.0 {
		t.Errorf("final batch's charges: %v", attrs)
	}
	// The value was bound as an Int32; the store keeps numbers as JSON,
	// which reads back as a Long.
	seen := map[int64]bool{}
	for _, v := range ns {
		if n, ok := v.(int64); ok && n >= 0 && n < 130 {
			seen[n] = true
		}
	}
	if len(ns) != 130 || len(seen) != 130 {
		t.Errorf("130 items: got %d results, %d distinct", len(ns), len(seen))
	}
}

// TestModernBytecode runs the fluent API (bytecode requests, processor
// traversal) through DriverRemoteConnection.
func TestModernBytecode(t *testing.T) {
	_, url := start(t)
	c := client(t, url, "modern", auth.EmulatorKey)
	loadModern(t, c)
	rc, err := gremlingo.NewDriverRemoteConnection(url, func(s *gremlingo.DriverRemoteConnectionSettings) {
		s.AuthInfo = gremlingo.BasicAuthInfo("/dbs/graphdb/colls/modern", auth.EmulatorKey)
		s.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	g := gremlingo.Traversal_().With(rc)
	names := func(tr *gremlingo.GraphTraversal) string {
		t.Helper()
		rs, err := tr.ToList()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = r.GetString()
		}
		return sorted(out)
	}
	if got := names(g.V().HasLabel("software").Values("name")); got != "lop,ripple" {
		t.Errorf("software names = %s", got)
	}
	if got := names(g.V().Has("name", "marko").Out("knows").Values("name")); got != "josh,vadas" {
		t.Errorf("marko's friends = %s", got)
	}
	if got := names(g.V().Has("person", "age", gremlingo.P.Lt(30)).Values("name")); got != "marko,vadas" {
		t.Errorf("persons under 30 = %s", got)
	}
	n, err := g.V().Out("created").Count().Next()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := n.GetInt64(); err != nil || c != 4 {
		t.Errorf("g.V().out('created').count() = %v, %v; want 4", c, err)
	}
	// A write through bytecode, read back by a script.
	if _, err := g.AddV("person").Property("id", "13").Property("name", "daniel").Property("age", 40).Next(); err != nil {
		t.Fatal(err)
	}
	if got := sorted(strs(t, must(t, c, "g.V(['daniel','13']).values('name')"))); got != "daniel" {
		t.Errorf("added vertex: %s", got)
	}
}

// TestPointRead: a vertex addressed by [partition key, id] is read from its
// one logical partition, a filter on another property fans out to all
// four physical partitions; the request charges (x-ms-total-request-charge)
// say so.
func TestPointRead(t *testing.T) {
	_, url := start(t)
	c := client(t, url, "modern", auth.EmulatorKey)
	loadModern(t, c)
	_, point, err := submit(t, c, "g.V(['marko','1'])")
	if err != nil {
		t.Fatal(err)
	}
	_, scan, err := submit(t, c, "g.V().has('age', 29)")
	if err != nil {
		t.Fatal(err)
	}
	pc, _ := point["x-ms-total-request-charge"].(float64)
	sc, _ := scan["x-ms-total-request-charge"].(float64)
	if pc <= 0 || sc <= pc {
		t.Errorf("point read charged %v, scan %v; want 0 < point < scan", point["x-ms-total-request-charge"], scan["x-ms-total-request-charge"])
	}
	// executionProfile() (Cosmos's shape, reference-execution-profile.md)
	// says how many partitions the GetVertices operator touched.
	if f := fanout(t, must(t, c, "g.V(['marko','1']).executionProfile()")); f != 1 {
		t.Errorf("point read fanoutFactor = %v, want 1", f)
	}
	if f := fanout(t, must(t, c, "g.V().has('age', 29).executionProfile()")); f < 4 {
		t.Errorf("scan fanoutFactor = %v, want every partition (at least 4)", f)
	}
	for _, a := range []string{"x-ms-request-charge", "x-ms-status-code", "x-ms-activity-id", "x-ms-server-time-ms"} {
		if _, ok := point[a]; !ok {
			t.Errorf("no %s in %v", a, point)
		}
	}
}

// fanout returns the fanoutFactor of the first store operation of the
// first operator of an executionProfile() answer.
func fanout(t *testing.T, vs []any) float64 {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("executionProfile answered %#v: %v", vs, r)
		}
	}()
	p := vs[0].([]any)[0].(map[any]any)
	m := p["metrics"].([]any)[0].(map[any]any)
	if m["name"] != "GetVertices" {
		t.Fatalf("first operator %v, want GetVertices", m["name"])
	}
	switch f := m["storeOps"].([]any)[0].(map[any]any)["fanoutFactor"].(type) {
	case int32:
		return float64(f)
	case int64:
		return float64(f)
	case float64:
		return f
	default:
		t.Fatalf("fanoutFactor is %T", f)
	}
	return 0
}

// TestAuthFailures: a wrong key and a graph that does not exist are
// refused; the read-only key reads but cannot write.
func TestAuthFailures(t *testing.T) {
	_, url := start(t)
	wrong := base64.StdEncoding.EncodeToString([]byte("not the key of this account at all, no"))
	if _, _, err := submit(t, client(t, url, "modern", wrong), "g.V().count()"); err == nil || !strings.Contains(err.Error(), "incorrect") {
		t.Errorf("wrong key: %v", err)
	}
	if _, _, err := submit(t, client(t, url, "nope", auth.EmulatorKey), "g.V().count()"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("missing graph: %v", err)
	}
	if _, _, err := submit(t, client(t, url, "byid", auth.EmulatorKey), "g.V().count()"); err == nil || !strings.Contains(err.Error(), "/id") {
		t.Errorf("graph partitioned on /id: %v", err)
	}
	rw := client(t, url, "modern", auth.EmulatorKey)
	loadModern(t, rw)
	ro := client(t, url, "modern", readOnlyKey)
	if n := count(t, must(t, ro, "g.V().count()")); n != 6 {
		t.Errorf("read-only count = %d", n)
	}
	if _, _, err := submit(t, ro, "g.addV('person').property('id','99').property('name','eve')"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only write: %v", err)
	}
	if _, _, err := submit(t, ro, "g.V(['marko','1']).drop()"); err == nil {
		t.Error("read-only drop succeeded")
	}
	if n := count(t, must(t, rw, "g.V().count()")); n != 6 {
		t.Errorf("after the refused writes count = %d, want 6", n)
	}
}

// TestThrottled: a burst of writes into one logical partition of a 400
// RU/s graph is throttled: status 500 with x-ms-status-code 429 and
// x-ms-retry-after-ms, as Cosmos answers (supplyon/gremcos
// ErrorHandling.md).
func TestThrottled(t *testing.T) {
	_, url := start(t)
	c := client(t, url, "hot", auth.EmulatorKey)
	var mu sync.Mutex
	var throttled error
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; throttled == nil && time.Now().Before(deadline); i += 16 {
		var wg sync.WaitGroup
		for j := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				script := fmt.Sprintf("g.addV('item').property('id','v%d').property('pk','one').property('payload', '%s')", i+j, strings.Repeat("x", 2000))
				if _, _, err := submit(t, c, script); err != nil {
					mu.Lock()
					throttled = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	if throttled == nil {
		t.Fatal("no request was throttled")
	}
	msg := throttled.Error()
	if !strings.Contains(msg, "x-ms-status-code:429") || !strings.Contains(msg, "x-ms-retry-after-ms:00:00:") {
		t.Errorf("throttled answer: %v", msg)
	}
}

// TestTLS: with --tls the Gremlin API speaks wss with the server's
// certificate.
func TestTLS(t *testing.T) {
	s, err := server.Start(server.Options{InMemory: true, TLS: true, Listen: "127.0.0.1:0", GremlinListen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(t.Context())
	if _, err := s.Engine().CreateDatabase("graphdb", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	spec := engine.ContainerSpec{ID: "g", PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}}
	if _, err := s.Engine().CreateContainer("graphdb", spec, engine.Throughput{RUs: 400}); err != nil {
		t.Fatal(err)
	}
	url := s.GremlinURL()
	if !strings.HasPrefix(url, "wss://") {
		t.Fatalf("GremlinURL %s, want wss://", url)
	}
	c, err := gremlingo.NewClient(url, func(cs *gremlingo.ClientSettings) {
		cs.AuthInfo = gremlingo.BasicAuthInfo("/dbs/graphdb/colls/g", auth.EmulatorKey)
		cs.TlsConfig = &tls.Config{InsecureSkipVerify: true} // the self-signed certificate
		cs.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	must(t, c, "g.addV('x').property('id','a').property('pk','a')")
	if n := count(t, must(t, c, "g.V().count()")); n != 1 {
		t.Errorf("count %d", n)
	}
	plain, err := gremlingo.NewClient(strings.Replace(url, "wss://", "ws://", 1), func(cs *gremlingo.ClientSettings) {
		cs.AuthInfo = gremlingo.BasicAuthInfo("/dbs/graphdb/colls/g", auth.EmulatorKey)
		cs.LogVerbosity = gremlingo.Off
	})
	if err == nil {
		defer plain.Close()
		if _, _, err := submit(t, plain, "g.V().count()"); err == nil {
			t.Error("a plain ws client was served by the TLS listener")
		}
	}
}
