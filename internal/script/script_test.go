package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

// memColl is a Collection over a map, which records what it was asked.
type memColl struct {
	docs   map[string]string
	writes []Write
	// refuseAfter makes writes past it ErrNotAccepted (0: never).
	refuseAfter int
}

var errNotFound = errors.New("not found")
var errConflict = errors.New("conflict")

func (m *memColl) SelfLink() string { return "dbs/AAAA==/colls/AAAAAAAAAAA=/" }

func (m *memColl) Read(id string) ([]byte, error) {
	d, ok := m.docs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", errNotFound, id)
	}
	return []byte(d), nil
}

func (m *memColl) ReadAll(p Page) ([][]byte, string, error) {
	var ids []string
	for id := range m.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// The continuation is the last id returned.
	var out [][]byte
	for _, id := range ids {
		if id <= p.Continuation {
			continue
		}
		if p.Size > 0 && len(out) == p.Size {
			return out, ids[len(out)-1+indexOf(ids, p.Continuation)+1], nil
		}
		out = append(out, []byte(m.docs[id]))
	}
	return out, "", nil
}

// indexOf is the position of the first id after c, minus one.
func indexOf(ids []string, c string) int {
	n := 0
	for _, id := range ids {
		if id <= c {
			n++
		}
	}
	return n - 1
}

func (m *memColl) Query(text string, params []byte, p Page) ([][]byte, string, error) {
	return [][]byte{[]byte(fmt.Sprintf(`{"query":%q,"params":%s,"page":%d}`, text, orNull(params), p.Size))}, "", nil
}

func orNull(b []byte) string {
	if b == nil {
		return "null"
	}
	return string(b)
}

func (m *memColl) Write(w Write) ([]byte, error) {
	if m.refuseAfter > 0 && len(m.writes) >= m.refuseAfter {
		return nil, ErrNotAccepted
	}
	_, exists := m.docs[w.ID]
	switch {
	case w.Kind == Create && exists:
		return nil, errConflict
	case (w.Kind == Replace || w.Kind == Delete) && !exists:
		return nil, errNotFound
	}
	m.writes = append(m.writes, w)
	if w.Kind == Delete {
		d := m.docs[w.ID]
		delete(m.docs, w.ID)
		return []byte(d), nil
	}
	m.docs[w.ID] = string(w.Body)
	return w.Body, nil
}

func status(err error) int {
	switch {
	case errors.Is(err, errNotFound):
		return 404
	case errors.Is(err, errConflict):
		return 409
	}
	return 500
}

func runScript(t *testing.T, body string, coll *memColl, call *Call, lim Limits) (*Result, error) {
	t.Helper()
	p, err := Compile("s", body)
	if err != nil {
		return nil, err
	}
	n := 0
	return Run(p, &Env{Status: status, Limits: lim, NewID: func() string { n++; return fmt.Sprint("gen", n) }}, coll, call)
}

func TestServerSideAPI(t *testing.T) {
	f := func(name, body string, args string, want string, wantWrites int) {
		t.Helper()
		coll := &memColl{docs: map[string]string{"a": `{"id":"a","n":1}`}}
		var a []byte
		if args != "" {
			a = []byte(args)
		}
		res, err := runScript(t, body, coll, &Call{Args: a}, Limits{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(res.Body) != want {
			t.Fatalf("%s: body %s, want %s", name, res.Body, want)
		}
		if len(coll.writes) != wantWrites {
			t.Fatalf("%s: %d writes, want %d", name, len(coll.writes), wantWrites)
		}
	}
	f("arguments are spread", `function (a, b) { getContext().getResponse().setBody([b, a]); }`, `[1, {"x": "y"}]`, `[{"x":"y"},1]`, 0)
	f("no body set", `function () {}`, "", ``, 0)
	f("appendBody", `function () { var r = getContext().getResponse(); r.setBody("a"); r.appendBody("b"); r.appendBody(1); }`, "", `"ab1"`, 0)
	// Callbacks run after the call that queued them returns, in order.
	f("callbacks are queued", `function () {
		var c = getContext().getCollection(), log = [];
		var ok = c.readDocument(c.getSelfLink() + "docs/a", function (err, doc) { log.push("cb:" + doc.n); });
		log.push("returned:" + ok);
		c.readDocument("docs/zz", function (err) { log.push("err:" + err.number); getContext().getResponse().setBody(log); });
	}`, "", `["returned:true","cb:1","err:404"]`, 0)
	f("__ is the collection", `function () { __.createDocument(__.getSelfLink(), {id: "b"}, function (e, d) { getContext().getResponse().setBody(d); }); }`, "", `{"id":"b"}`, 1)
	f("ids are generated", `function () { __.createDocument(__.getSelfLink(), {n: 2}, function (e, d) { getContext().getResponse().setBody(d.id); }); }`, "", `"gen1"`, 1)
	f("query specs", `function () { __.queryDocuments(__.getSelfLink(), {query: "SELECT * FROM c WHERE c.n = @n", parameters: [{name: "@n", value: 1}]}, function (e, r) { getContext().getResponse().setBody(r[0]); }); }`,
		"", `{"query":"SELECT * FROM c WHERE c.n = @n","params":[{"name":"@n","value":1}],"page":0}`, 0)
	f("query strings", `function () { __.queryDocuments(__.getSelfLink(), "SELECT 1", {}, function (e, r) { getContext().getResponse().setBody(r[0].params); }); }`, "", `null`, 0)
	f("errors to callbacks do not abort", `function () { __.createDocument(__.getSelfLink(), {id: "a"}, function (e) { getContext().getResponse().setBody(e.number); }); }`, "", `409`, 0)
	f("readDocuments", `function () { __.readDocuments(__.getSelfLink(), function (e, docs) { getContext().getResponse().setBody(docs.length); }); }`, "", `1`, 0)
	f("paged readDocuments", `function () {
		__.createDocument(__.getSelfLink(), {id: "b"});
		__.createDocument(__.getSelfLink(), {id: "c"});
		var seen = [];
		function page(cont) {
			__.readDocuments(__.getSelfLink(), {pageSize: 2, continuation: cont}, function (e, docs, opts) {
				docs.forEach(function (d) { seen.push(d.id); });
				if (opts.continuation) page(opts.continuation); else getContext().getResponse().setBody(seen);
			});
		}
		page();
	}`, "", `["a","b","c"]`, 2)
	f("replace and delete by link", `function () {
		__.replaceDocument("dbs/d/colls/c/docs/a", {id: "a", n: 5}, {etag: "\"e\""});
		__.deleteDocument("dbs/d/colls/c/docs/a/", function (e, d) { getContext().getResponse().setBody(d.n); });
	}`, "", `5`, 2)
}

func TestScriptFailures(t *testing.T) {
	f := func(name, body string, lim Limits, want error, text string) {
		t.Helper()
		coll := &memColl{docs: map[string]string{"a": `{"id":"a"}`}}
		_, err := runScript(t, body, coll, &Call{}, lim)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
			t.Fatalf("%s: %v, want %v containing %q", name, err, want, text)
		}
	}
	f("not a function", `var x = 1;`, Limits{}, ErrCompile, "does not compile")
	f("not JavaScript", `function ( {`, Limits{}, ErrCompile, "does not compile")
	f("throw", `function () { throw new Error("nope"); }`, Limits{}, ErrThrown, "Exception = Error: nope")
	f("throw a string", `function () { throw "plain"; }`, Limits{}, ErrThrown, "plain")
	f("error without callback", `function () { __.createDocument(__.getSelfLink(), {id: "a"}); }`, Limits{}, ErrThrown, "conflict")
	f("throw in a callback", `function () { __.readDocument("docs/a", function () { throw new Error("late"); }); }`, Limits{}, ErrThrown, "late")
	f("bad link", `function () { __.readDocument("nolink"); }`, Limits{}, ErrThrown, "not a document link")
	f("endless loop", `function () { while (true) {} }`, Limits{Timeout: 50 * time.Millisecond}, ErrTimeout, "stopped after 50ms")
	f("endless loop in a callback", `function () { __.readDocument("docs/a", function () { for (;;) {} }); }`, Limits{Timeout: 50 * time.Millisecond}, ErrTimeout, "stopped")
	f("deep recursion", `function () { function r(n) { return r(n + 1) + 1; } r(0); }`, Limits{}, ErrThrown, "call stack")
	f("big response", `function () { var s = "x"; for (var i = 0; i < 12; i++) s += s; getContext().getResponse().setBody(s); }`, Limits{MaxResponseBytes: 1000}, ErrTooLarge, "limit is 1000 bytes")
	f("big appended response", `function () { var r = getContext().getResponse(); for (;;) r.appendBody("xxxxxxxxxx"); }`, Limits{MaxResponseBytes: 1000}, ErrTooLarge, "limit is 1000 bytes")
	f("memory", `function () { var a = []; for (;;) a.push(new Array(100000).join("x")); }`, Limits{Timeout: 20 * time.Second, MaxHeapGrowth: 64 << 20}, ErrTooLarge, "memory grew")
	f("no modules", `function () { require("fs"); }`, Limits{}, ErrThrown, "require")
}

// TestNotAccepted: past the collection's budget or the accept time,
// operations return false and their callbacks never run.
func TestNotAccepted(t *testing.T) {
	// A script that chains operations from their callbacks ends when they
	// stop being accepted, at the accept time, well before its timeout.
	res, err := runScript(t, `function () {
		var n = 0;
		function again() { n++; if (!__.readDocument("docs/a", again)) getContext().getResponse().setBody("stopped"); }
		again();
	}`, &memColl{docs: map[string]string{"a": "{}"}}, &Call{}, Limits{Timeout: 200 * time.Millisecond})
	if err != nil || string(res.Body) != `"stopped"` {
		t.Fatalf("chained callbacks: %v, %v", res, err)
	}

	coll := &memColl{docs: map[string]string{}, refuseAfter: 3}
	res, err = runScript(t, `function () {
		var n = 0, called = 0;
		while (__.createDocument(__.getSelfLink(), {id: "d" + n}, function () { called++; })) n++;
		getContext().getResponse().setBody(n);
	}`, coll, &Call{}, Limits{})
	if err != nil || string(res.Body) != "3" || len(coll.writes) != 3 {
		t.Fatalf("%v, %v, %d writes", res, err, len(coll.writes))
	}
	// The clock is injected: each reading advances it a second, so the
	// loop passes the accept time (four fifths of 10 s) at once.
	now := time.Unix(100, 0)
	coll = &memColl{docs: map[string]string{"a": `{"id":"a"}`}}
	env := &Env{Now: func() time.Time { now = now.Add(time.Second); return now }, Limits: Limits{Timeout: 10 * time.Second}}
	p2, err := Compile("s", `function () {
		var first = __.readDocument("docs/a", function () {});
		var d = new Date(); // the injected clock
		while (new Date().getTime() - d.getTime() < 9000) {}
		getContext().getResponse().setBody([first, __.readDocument("docs/a", function () {})]);
	}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err = Run(p2, env, coll, &Call{})
	if err != nil || string(res.Body) != "[true,false]" {
		t.Fatalf("after the accept time: %v, %v", res, err)
	}
}

func TestTriggerRequestAndResponse(t *testing.T) {
	coll := &memColl{docs: map[string]string{}}
	res, err := runScript(t, `function () {
		var req = getContext().getRequest(), d = req.getBody();
		d.added = req.getOperationType();
		req.setBody(d);
	}`, coll, &Call{Request: []byte(`{"id":"x"}`), Operation: "Create"}, Limits{})
	if err != nil || string(res.Request) != `{"id":"x","added":"Create"}` {
		t.Fatalf("pre-trigger: %s, %v", res.Request, err)
	}
	res, err = runScript(t, `function () {
		var d = getContext().getResponse().getBody();
		__.createDocument(__.getSelfLink(), {id: "audit-" + d.id});
	}`, coll, &Call{Response: []byte(`{"id":"x","_etag":"e"}`)}, Limits{})
	if err != nil || res.Request != nil || coll.docs["audit-x"] == "" {
		t.Fatalf("post-trigger: %v, %v", res, err)
	}
}

func TestFunc(t *testing.T) {
	p, err := Compile("tax", `function (x, o) { return o === undefined ? x * 2 : {x: x, o: o, r: Math.random(), d: new Date().getTime()}; }`)
	if err != nil {
		t.Fatal(err)
	}
	f, err := p.NewFunc(&Env{Now: func() time.Time { return time.Unix(0, 0) }, Rand: func() float64 { return 0.5 }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		out, err := f.Call([][]byte{[]byte("21")})
		if err != nil || string(out) != "42" {
			t.Fatalf("call %d: %s, %v", i, out, err)
		}
	}
	out, err := f.Call([][]byte{[]byte("1"), []byte(`[true]`)})
	var v map[string]any
	if err != nil || json.Unmarshal(out, &v) != nil || v["r"] != 0.5 || v["d"] != 0.0 {
		t.Fatalf("%s, %v", out, err)
	}
	spin, _ := Compile("spin", `function () { for (;;) {} }`)
	g, _ := spin.NewFunc(&Env{Limits: Limits{Timeout: 20 * time.Millisecond}})
	if _, err := g.Call(nil); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a spinning function: %v", err)
	}
	undef, _ := Compile("u", `function () {}`)
	h, _ := undef.NewFunc(&Env{})
	if out, err := h.Call(nil); err != nil || out != nil {
		t.Fatalf("undefined result: %s, %v", out, err)
	}
}

func TestConsoleLog(t *testing.T) {
	res, err := runScript(t, `function () { console.log("a", 1, {}); for (var i = 0; i < 100000; i++) console.log("xxxxxxxxxx"); }`,
		&memColl{docs: map[string]string{}}, &Call{}, Limits{})
	if err != nil || !strings.HasPrefix(res.Log, "a 1 [object Object]\nxxxxxxxxxx\n") || len(res.Log) > MaxLogBytes {
		t.Fatalf("log %.40q (%d bytes), %v", res.Log, len(res.Log), err)
	}
}

func TestConsoleLogSubstitutions(t *testing.T) {
	res, err := runScript(t, `function () { console.log("%s of %s: %s%%", "a", 2, true, "rest"); console.log("%s"); console.log(""); }`,
		&memColl{docs: map[string]string{}}, &Call{}, Limits{})
	if err != nil || res.Log != "a of 2: true% rest\n%s\n\n" {
		t.Fatalf("log %q, %v", res.Log, err)
	}
}

func TestResponseAppendValue(t *testing.T) {
	res, err := runScript(t, `function () { var r = getContext().getResponse(); r.setBody("a"); r.appendValue("Body", "b"); r.appendBody("c"); }`,
		&memColl{docs: map[string]string{}}, &Call{}, Limits{})
	if err != nil || string(res.Body) != `"abc"` {
		t.Fatalf("body %s, %v", res.Body, err)
	}
	if _, err := runScript(t, `function () { getContext().getResponse().appendValue("Other", "b"); }`,
		&memColl{docs: map[string]string{}}, &Call{}, Limits{}); err == nil || !strings.Contains(err.Error(), "Body") {
		t.Fatalf("appendValue of another key: %v", err)
	}
}

func TestQueryAPI(t *testing.T) {
	coll := &memColl{docs: map[string]string{
		"a": `{"id":"a","n":3,"tags":["x","y"]}`, "b": `{"id":"b","n":1,"tags":["z"]}`, "c": `{"id":"c","n":2,"tags":[]}`}}
	f := func(js, want string) {
		t.Helper()
		res, err := runScript(t, "function () { var r = getContext().getResponse(); "+js+" }", coll, &Call{}, Limits{})
		if err != nil || string(res.Body) != want {
			t.Fatalf("%s: %v, %v; want %s", js, res, err, want)
		}
	}
	f(`__.filter(function (d) { return d.n > 1; }, function (e, docs) { r.setBody(docs.map(function (d) { return d.id; })); });`, `["a","c"]`)
	f(`__.map(function (d) { return d.n * 10; }, {}, function (e, v) { r.setBody(v); });`, `[30,10,20]`)
	f(`__.pluck("n", function (e, v) { r.setBody(v); });`, `[3,1,2]`)
	f(`__.chain().sortBy("n").pluck("id").value(function (e, v) { r.setBody(v); });`, `["b","c","a"]`)
	f(`__.chain().sortByDescending(function (d) { return d.n; }).pluck("tags").flatten().value(function (e, v) { r.setBody(v); });`, `["x","y","z"]`)
	f(`r.setBody(__.filter(function () { return true; }).isAccepted);`, `true`)
}

// TestBuiltinCaps: a builtin that would run for minutes or allocate
// gigabytes inside one call stops the script with a clear error, though
// goja checks its time limit only between instructions.
func TestBuiltinCaps(t *testing.T) {
	// A backreference makes goja run the pattern on regexp2, which
	// backtracks: each "a" doubles the time, so 40 take hours.
	const backtrack = `/^(a+)+\1?b$/.test("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")`
	f := func(name, js string, lim Limits, want error, text string) {
		t.Helper()
		_, err := runScript(t, "function () { "+js+" }", &memColl{docs: map[string]string{}}, &Call{}, lim)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), text) {
			t.Fatalf("%s: %v, want %v containing %q", name, err, want, text)
		}
	}
	f("a backtracking match", backtrack, Limits{}, ErrTimeout, "regular expression")
	f("a backtracking replace", `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".replace(/^(a+)+\1?b$/, "")`, Limits{}, ErrTimeout, "regular expression")
	f("a backtracking match caught", `try { `+backtrack+` } catch (e) {} getContext().getResponse().setBody(1);`, Limits{}, ErrTimeout, "regular expression")
	// The default budget is 512 MiB (Limits.MaxHeapGrowth).
	f("a 1 GiB typed array", `new Uint8Array(Math.pow(2, 30)).fill(1);`, Limits{}, ErrTooLarge, "a Uint8Array of 1073741824 bytes")
	f("a 1 GiB typed array caught", `try { new Uint8Array(Math.pow(2, 30)); } catch (e) {} getContext().getResponse().setBody(1);`, Limits{}, ErrTooLarge, "memory limit of 512 MiB")
	f("a 1 GiB ArrayBuffer", `new ArrayBuffer(Math.pow(2, 30));`, Limits{}, ErrTooLarge, "an ArrayBuffer")
	f("a typed array from an array-like", `Float64Array.from({length: Math.pow(2, 27)});`, Limits{}, ErrTooLarge, "Float64Array")
	f("typed arrays add up", `var keep = []; for (;;) keep.push(new Uint8Array(1 << 20));`, Limits{MaxHeapGrowth: 64 << 20}, ErrTooLarge, "memory limit of 64 MiB")
	f("slices add up", `var a = new Uint8Array(16 << 20), keep = []; for (;;) keep.push(a.slice());`, Limits{MaxHeapGrowth: 64 << 20}, ErrTooLarge, "Uint8Array")
	f("repeat", `"xx".repeat(Math.pow(2, 29));`, Limits{}, ErrTooLarge, "String.prototype.repeat")
	f("padStart", `"".padStart(Math.pow(2, 30), "ab");`, Limits{}, ErrTooLarge, "String.prototype.padStart")
	f("join over holes", `new Array(Math.pow(2, 32) - 1).join("");`, Limits{}, ErrTooLarge, "Array.prototype.join on 4294967295 elements")
	f("join of separators", `new Array(1 << 20).join(new Array(1 << 10).join("x"));`, Limits{}, ErrTooLarge, "Array.prototype.join")
	f("fill of an array-like", `Array.prototype.fill.call({length: Math.pow(2, 32) - 1}, 0);`, Limits{}, ErrTooLarge, "Array.prototype.fill")
	f("indexOf over holes", `var a = []; a[Math.pow(2, 32) - 2] = 1; a.indexOf(2);`, Limits{}, ErrTooLarge, "Array.prototype.indexOf")
	f("split into characters", `"x".repeat(1 << 23).split("");`, Limits{MaxHeapGrowth: 64 << 20}, ErrTooLarge, "String.prototype.split on 8388608 elements")
	f("an array from a string", `Array.from("x".repeat(1 << 23));`, Limits{MaxHeapGrowth: 64 << 20}, ErrTooLarge, "Array.from on 8388608 elements")
	f("apply of an array-like", `Math.max.apply(null, {length: Math.pow(2, 31)});`, Limits{}, ErrTooLarge, "Function.prototype.apply")
	// goja parses and writes JSON recursively: 3 million levels would
	// overflow the process's stack, and writing 100000 takes it a minute
	// (each level looks for a cycle among those above it).
	f("a deep JSON.parse", `JSON.parse("[".repeat(3000000) + "]".repeat(3000000));`, Limits{}, ErrTooLarge, "JSON.parse of a value nested deeper than 10000 levels")
	f("a deep JSON.stringify", `var a = []; for (var i = 0; i < 100000; i++) a = [a]; JSON.stringify(a);`, Limits{}, ErrTooLarge, "JSON.stringify of a value nested deeper than 10000 levels")
	// The response body is written by the same JSON.stringify, after the
	// script returned.
	f("a deep request body", `var a = []; for (var i = 0; i < 400000; i++) a = [a]; getContext().getRequest().setBody(a);`, Limits{}, ErrTooLarge, "JSON.stringify of a value nested deeper than 10000 levels")
	f("a deep response body", `var a = []; for (var i = 0; i < 400000; i++) a = [a]; getContext().getResponse().setBody(a);`, Limits{}, ErrTooLarge, "JSON.stringify of a value nested deeper than 10000 levels")
	// 2^40 values to write: the time limit stops it.
	f("a long JSON.stringify", `var a = [1]; for (var i = 0; i < 40; i++) a = [a, a]; JSON.stringify(a);`, Limits{Timeout: 200 * time.Millisecond}, ErrTimeout, "stopped after 200ms")
	f("a cycle", `var o = {}; o.o = o; JSON.stringify(o);`, Limits{}, ErrThrown, "circular")

	// What stays within the caps behaves as before.
	res, err := runScript(t, `function () {
		var a = new Uint8Array(4).fill(7), b = new Uint8Array(new ArrayBuffer(8), 2, 4);
		class Bytes extends Uint8Array {}
		var c = new Bytes(3), m = "abcabc".match(/(b)(?=c)/g);
		getContext().getResponse().setBody([
			a instanceof Uint8Array, a.constructor === Uint8Array, Array.from(a.slice(1, 3)), b.length, b.buffer.byteLength,
			c instanceof Bytes, c instanceof Uint8Array, Array.from(Uint16Array.from([1, 2]).map(function (x) { return x * 2; })),
			new ArrayBuffer(16).slice(4).byteLength, Object.prototype.toString.call(new DataView(new ArrayBuffer(2))),
			/(a)\1/.test("xaa"), "abcabc".replace(/(b)(?=c)/g, "[$1]"), m, "a1b2".split(/(?<=\d)/), "a,b".split(","), "xyz".search(/(?<!x)z/),
			Array.from("a1a2".matchAll(/a(\d)/g), function (x) { return x[1]; }), "ab".repeat(2), "7".padStart(3, "0"),
			[1, 2, 3].join("-"), [3, 1, 2].sort(), Math.max.apply(null, [1, 5, 2]),
			JSON.stringify({a: [1, {b: "x"}], c: undefined, d: {toJSON: function () { return "t"; }}}),
			JSON.stringify({a: 1, b: 2, c: {a: 3, d: [4, {a: 5, e: 6}]}}, ["a", "c", "d"]),
			JSON.stringify({a: 1, b: "x"}, function (k, v) { return typeof v === "number" ? v * 2 : v; }),
			JSON.stringify([1], null, 1), JSON.stringify(undefined) === undefined,
			JSON.parse('{"a": [1, {"b": 2}]}', function (k, v) { return k === "b" ? v + 1 : v; }).a[1].b]);
	}`, &memColl{docs: map[string]string{}}, &Call{}, Limits{})
	want := `[true,true,[7,7],4,8,true,true,[2,4],12,"[object DataView]",true,"a[b]ca[b]c",["b","b"],["a1","b2"],["a","b"],2,["1","2"],"abab","007","1-2-3",[1,2,3],5,` +
		`"{\"a\":[1,{\"b\":\"x\"}],\"d\":\"t\"}","{\"a\":1,\"c\":{\"a\":3,\"d\":[4,{\"a\":5}]}}","{\"a\":2,\"b\":\"x\"}","[\n 1\n]",true,3]`
	if err != nil || string(res.Body) != want {
		t.Fatalf("within the caps: %v, %v; want %s", res, err, want)
	}

	// A user-defined function is stopped the same way, and its next call
	// gets a fresh budget.
	p, err := Compile("udf", `function (n) { if (n === 0) return `+backtrack+`; return new Uint8Array(n).length; }`)
	if err != nil {
		t.Fatal(err)
	}
	fn, err := p.NewFunc(&Env{Limits: Limits{Timeout: 100 * time.Millisecond, MaxHeapGrowth: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fn.Call([][]byte{[]byte("0")}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("a backtracking function: %v", err)
	}
	fn, _ = p.NewFunc(&Env{Limits: Limits{MaxHeapGrowth: 64 << 20}})
	for i := 0; i < 3; i++ {
		if out, err := fn.Call([][]byte{[]byte(fmt.Sprint(40 << 20))}); err != nil || string(out) != fmt.Sprint(40<<20) {
			t.Fatalf("call %d of 40 MiB: %s, %v", i, out, err)
		}
	}
	if _, err := fn.Call([][]byte{[]byte(fmt.Sprint(80 << 20))}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a function allocating 80 MiB: %v", err)
	}
}

// TestRegexpEngines checks which patterns count as backtracking: only a
// match on regexp2 can time out, so a failed match of a linear-time pattern
// that scanned a long input for a while is not taken for a timeout.
func TestRegexpEngines(t *testing.T) {
	rt := goja.New()
	c := newCaps(rt, "test", 1<<20)
	for src, want := range map[string]bool{
		`/abc/`:              false,
		`/a+b*c?/gi`:         false,
		`/^[a-z]+$/m`:        false,
		`/(a+)+\1/`:          true, // a backreference
		`/a(?=b)/`:           true, // a lookahead
		`/(?<!x)y/`:          true, // a lookbehind
		`/(\w+)\s\1/i`:       true,
		`/x{2,5}y/s`:         false,
		`/[\u0041-\u005A]/u`: false,
	} {
		re, err := rt.RunString(src)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := c.backtracks(re); got != want {
			t.Errorf("backtracks(%s) = %v, want %v", src, got, want)
		}
	}
}
