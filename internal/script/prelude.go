package script

import (
	"sync"

	"github.com/dop251/goja"
)

// preludeSource adds Cosmos's query API to the __ object: filter, map,
// pluck, flatten, sortBy, sortByDescending, and chain() of them ending in
// value(). Each reads the logical partition's documents (readDocuments)
// and transforms them in JavaScript; it returns {isAccepted} and calls
// its callback with (err, results, options).
const preludeSource = `(function (coll) {
	function run(stages, cb) {
		var ok = coll.readDocuments(coll.getSelfLink(), {pageSize: -1}, function (err, docs) {
			if (err) {
				if (cb) return cb(err);
				throw err;
			}
			var out = docs;
			for (var i = 0; i < stages.length; i++) out = stages[i](out);
			if (cb) cb(undefined, out, {});
		});
		return {isAccepted: ok};
	}
	function key(f) { return typeof f === "function" ? f : function (x) { return x[f]; }; }
	function order(f, dir) {
		f = key(f);
		return function (d) {
			return d.slice().sort(function (a, b) {
				var x = f(a), y = f(b);
				return x < y ? -dir : x > y ? dir : 0;
			});
		};
	}
	var stages = {
		filter: function (p) { return function (d) { return d.filter(function (x) { return p(x); }); }; },
		map: function (f) { return function (d) { return d.map(function (x) { return f(x); }); }; },
		pluck: function (k) { return function (d) { return d.map(function (x) { return x[k]; }); }; },
		flatten: function (deep) {
			return function (d) {
				var out = [];
				(function fl(a, depth) {
					for (var i = 0; i < a.length; i++) {
						if (Array.isArray(a[i]) && (deep || depth === 0)) fl(a[i], depth + 1);
						else out.push(a[i]);
					}
				})(d, 0);
				return out;
			};
		},
		sortBy: function (f) { return order(f, 1); },
		sortByDescending: function (f) { return order(f, -1); }
	};
	function callbackOf(a, b) { return typeof a === "function" ? a : b; }
	Object.keys(stages).forEach(function (name) {
		coll[name] = function (arg, options, cb) { return run([stages[name](arg)], callbackOf(options, cb)); };
	});
	coll.chain = function () {
		var list = [], c = {};
		Object.keys(stages).forEach(function (name) {
			c[name] = function (arg) { list.push(stages[name](arg)); return c; };
		});
		c.value = function (options, cb) { return run(list, callbackOf(options, cb)); };
		return c;
	};
})`

var prelude = sync.OnceValue(func() *goja.Program {
	p, err := goja.Compile("prelude", preludeSource, true)
	if err != nil {
		panic("BUG: the script prelude does not compile: " + err.Error())
	}
	return p
})

// installPrelude adds the query API to coll in rt.
func installPrelude(rt *goja.Runtime, coll *goja.Object) {
	v, err := rt.RunProgram(prelude())
	if err != nil {
		panic("BUG: the script prelude does not run: " + err.Error())
	}
	fn, _ := goja.AssertFunction(v)
	if _, err := fn(goja.Undefined(), coll); err != nil {
		panic("BUG: the script prelude fails: " + err.Error())
	}
}
