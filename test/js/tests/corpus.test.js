// The golden query corpus of the query engine (internal/query/exec/testdata:
// queries.txt with its expected rows, derived by hand from dataset.json), run
// through the JavaScript SDK against a real server, over a container of 4
// physical partitions with pages of 3 rows: once as the SDK sends queries by
// default (the server merges the partitions), once with forceQueryPlan (the
// SDK fetches the query plan, queries each range and merges itself).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey, rawRequest } from "./server.js";

const testdata = new URL("../../../internal/query/exec/testdata/", import.meta.url);

// parseCorpus reads queries.txt: cases are separated by blank lines; in a
// case, lines starting with # are comments, "params: {...}" gives the
// parameters, "order: any" compares rows as a multiset, "=> [...]" starts the
// expected rows (continuing to the end of the case), "error: text" expects an
// error containing text, and every other line is query text.
function parseCorpus() {
  const lines = readFileSync(new URL("queries.txt", testdata), "utf8").split("\n");
  const cases = [];
  let c = null;
  let inExpect = false;
  const flush = () => {
    if (c) {
      if (c.query === "" || (c.expect === "" && c.err === "")) throw new Error(`queries.txt:${c.line}: incomplete case`);
      cases.push(c);
    }
    c = null;
    inExpect = false;
  };
  lines.forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === "") return flush();
    if (trimmed.startsWith("#")) return;
    if (!c) c = { line: i + 1, query: "", params: "", anyOrd: false, expect: "", err: "" };
    if (inExpect) c.expect += "\n" + line;
    else if (trimmed.startsWith("params:")) c.params = trimmed.slice("params:".length).trim();
    else if (trimmed === "order: any") c.anyOrd = true;
    else if (trimmed.startsWith("=>")) {
      c.expect = trimmed.slice(2);
      inExpect = true;
    } else if (trimmed.startsWith("error:")) c.err = trimmed.slice("error:".length).trim();
    else c.query += (c.query ? "\n" : "") + line;
  });
  flush();
  return cases;
}

// topLevelOrderBy tells whether a query has ORDER BY outside parentheses
// (subqueries) and string literals: such rows are compared in order.
function topLevelOrderBy(q) {
  let depth = 0;
  let quote = "";
  const word = (ch) => ch !== undefined && /[A-Za-z0-9_]/.test(ch);
  for (let i = 0; i < q.length; i++) {
    const ch = q[i];
    if (quote) {
      if (ch === "\\") i++;
      else if (ch === quote) quote = "";
    } else if (ch === '"' || ch === "'") quote = ch;
    else if ("([{".includes(ch)) depth++;
    else if (")]}".includes(ch)) depth--;
    else if (depth === 0 && !word(q[i - 1]) && /^ORDER\s+BY(?![A-Za-z0-9_])/i.test(q.slice(i))) return true;
  }
  return false;
}

// The order of the dataset in storage with partition key /id (hash V2): the
// storage key is "EPK | id" and the EPK is the V2 hash of the id. The ranges
// of a 4-partition container put the first 9, the next 10, the next 12 and
// the last 9 of these documents in ranges 0 to 3.
const keyOrder = [
  "d16", "d39", "d40", "d36", "d31", "d12", "d26", "d04", "d23", "d10",
  "d24", "d19", "d34", "d08", "d17", "d01", "d30", "d38", "d28", "d18",
  "d37", "d03", "d05", "d25", "d32", "d22", "d02", "d33", "d06", "d35",
  "d29", "d15", "d07", "d21", "d27", "d09", "d13", "d14", "d20", "d11",
];

// The order in which a scan reads the dataset: range after range, each in
// creation order (the order of the documents' _rid), as the service scans.
// The documents are created in dataset order, d01 to d40, so it is
// keyOrder's four ranges, each sorted by id; the test checks it against the
// per-range read feeds.
const scanOrder = [9, 10, 12, 9].flatMap((n, i, all) => {
  const at = all.slice(0, i).reduce((a, b) => a + b, 0);
  return keyOrder.slice(at, at + n).sort();
});

// keyOrderExpect replaces the expectation of the cases whose rows depend on
// the storage order: ties in ORDER BY (by key order), and TOP or OFFSET
// without ORDER BY (by scan order). queries.txt derives them for the
// stand-in key of the in-memory golden test, "first 4 bytes of sha256(id) |
// id", an order no partition key of a real container gives. Each was
// derived again by hand, the same way, from keyOrder or scanOrder (ranks in
// parentheses). No other case depends on the order. (The same table is in
// test/gosdk/corpus_test.go.)
const keyOrderExpect = new Map([
  // Undefined v first, ties by key: d16 (1), d12 (6), d19 (12), d17 (15),
  // d30 (17), d18 (20), d15 (32), d13 (37), d14 (38), d20 (39), d11 (40);
  // then null, false, true, -1.5, 10, "10", "abc", [1, 2], {"a": 1}.
  [
    'SELECT VALUE c.id FROM c WHERE c.kind = "mix" OR c.kind = "order" ORDER BY c.v',
    '["d16", "d12", "d19", "d17", "d30", "d18", "d15", "d13", "d14", "d20", "d11", "d21", "d23", "d22", "d29", "d25", "d24", "d28", "d26", "d27"]',
  ],
  // The "fruit" tie: d05 (23) before d02 (27).
  [
    'SELECT c.id, t FROM c JOIN t IN c.tags WHERE c.cat = "b" ORDER BY t',
    '[{"id": "d05", "t": "berry"}, {"id": "d05", "t": "fruit"}, {"id": "d02", "t": "fruit"}, {"id": "d08", "t": "green"}, {"id": "d05", "t": "purple"}, {"id": "d02", "t": "yellow"}]',
  ],
  // The first 4 of the scan order (range 0 in creation order).
  ["SELECT TOP 4 VALUE c.id FROM c", '["d04", "d12", "d16", "d23"]'],
  // Orders in key order: d16 d12 d19 d17 d18 d15 ...
  ['SELECT VALUE c.id FROM c WHERE c.kind = "order" OFFSET 3 LIMIT 2', '["d17", "d18"]'],
  // Tags in scan order: d04 [], d12 -, d16 -, d23 -, d26 -, d31 "red" (not
  // an array), d36 -, d39 [red, fruit], d40 -; then range 1: d01 [red,
  // fruit], ...
  [
    "SELECT c.id, t FROM c JOIN t IN c.tags OFFSET 1 LIMIT 3",
    '[{"id": "d39", "t": "fruit"}, {"id": "d01", "t": "red"}, {"id": "d01", "t": "fruit"}]',
  ],
  // null d18; ann d17 (15), d13 (37), d11 (40); bob d12 (6), d15 (32), d20
  // (39); cat; dan; eve.
  ['SELECT VALUE c.id FROM c WHERE c.kind = "order" ORDER BY c.cust OFFSET 1 LIMIT 4', '["d17", "d13", "d11", "d12"]'],
  // The last document in scan order.
  ["SELECT VALUE c.id FROM c OFFSET 39 LIMIT 5", '["d27"]'],
  // No text has the term, so every score ties and the rows come in scan
  // order: range 0 in creation order is d04 d12 d16 d23 d26 d31 d36 d39 d40,
  // of which d04, d31 and d36 are the first with a string s.
  ['SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.s, "zzz")', '["d04", "d31", "d36"]'],
]);

// serverGaps lists the cases where the server's answer differs from the
// corpus, by query text, each with the difference. They still run, and one
// that passes fails the test, so that its entry is removed.
const serverGaps = new Map([]);

// notPlannable lists the queries whose plan the server refuses with a 400, as
// Cosmos DB's planner does: an aggregate composed with other expressions
// cannot be merged by an SDK. With forceQueryPlan they must be rejected with
// this message; by default the server runs them.
const compositions = "Compositions of aggregates and other expressions are not allowed.";
const notPlannable = new Map([
  ['SELECT VALUE {"n": COUNT(1), "s": SUM(c.v)} FROM c WHERE IS_NUMBER(c.v)', compositions],
  ['SELECT VALUE COUNT(1) + 1 FROM c WHERE c.kind = "mix"', compositions],
  ['SELECT VALUE [MIN(c.v), MAX(c.v)] FROM c WHERE c.kind = "mix" AND NOT IS_ARRAY(c.v) AND NOT IS_OBJECT(c.v)', compositions],
  ['SELECT VALUE {"k": c.kind, "n": COUNT(1)} FROM c GROUP BY c.kind', compositions],
]);

// sdkMerge lists what @azure/cosmos 4.10.1 itself returns with forceQueryPlan
// where its client-side merge (dist/esm/queryExecutionContext) gives other rows
// than the corpus. The server's answer to each of these queries is checked in
// the default mode, and what it sends the SDK with forceQueryPlan is a plan
// and the rows of one range at a time; the differences below arise in the
// SDK, which is why they are not server gaps. Each entry says what the SDK
// must return, so that a change on either side shows:
//   rejects: the SDK throws its own error (no HTTP status) matching this;
//   rows:    the SDK returns these rows (ordered when `ordered`);
//   pick:    the SDK returns this many distinct rows of `from` (the corpus
//            fixes no order there, and the SDK picks in its arrival order).
// The ranges hold, in key order: 0: d16 d39 d40 d36 d31 d12 d26 d04 d23;
// 1: d10 d24 d19 d34 d08 d17 d01 d30 d38 d28; 2: d18 d37 d03 d05 d25 d32 d22
// d02 d33 d06 d35 d29; 3: d15 d07 d21 d27 d09 d13 d14 d20 d11.
//
// OrderByDocumentProducerComparator cannot merge ORDER BY values of
// different types across rows ("Cannot execute cross partition order-by
// queries on mixed types", undefined included), nor null, arrays or objects
// ("unrecognizable type object"), which Cosmos DB's own ordering allows.
const orderByRefused = { rejects: /Cannot execute cross partition order-by queries on mixed types|unrecognizable type object/ };
// UnorderedDistinctEndpointComponent keeps a row only `if (item)`: null,
// false, 0 and "" are dropped; the other rows are the corpus's.
const falsyDropped = { rows: (expect) => JSON.parse(expect).filter((v) => v) };
// A query without FROM has one row; the plan covers the whole key space, so
// the SDK sends it to each of the 4 ranges and concatenates 4 such rows.
const fannedOut = { rows: (expect) => [0, 1, 2, 3].flatMap(() => JSON.parse(expect)) };
const sdkMerge = new Map([
  ["SELECT VALUE 1 + 2", fannedOut],
  ['SELECT 1 AS a, [1, "b"] AS arr', fannedOut],
  ["SELECT VALUE null", fannedOut],
  // SumAggregator, AverageAggregator and MaxAggregator skip a range whose
  // partial is undefined, where the corpus (and the .NET SDK) make the whole
  // aggregate undefined. SUM(c.n): ranges 0 ({"a": 1}, "5"), 1 (true) and 2
  // (null, [3]) are undefined, range 3 sums 2.5 and 0.
  ["SELECT SUM(c.n) AS total FROM c", { rows: '[{"total": 2.5}]' }],
  // MAX(c.n): undefined in ranges 0 ({"a": 1}) and 2 ([3]); 12 in range 1
  // (numbers above true), 2.5 in range 3.
  ["SELECT VALUE MAX(c.n) FROM c", { rows: "[12]" }],
  // AVG(c.n) of cat "a": range 0 (5, -0.5, "5") is undefined; ranges 1 (7, 5),
  // 2 (8) and 3 (2.5) give 22.5 / 4. COUNT, MIN and MAX are the corpus's.
  [
    'SELECT COUNT(1) AS cnt, MIN(c.n) AS lo, MAX(c.n) AS hi, AVG(c.n) AS mean FROM c WHERE c.cat = "a"',
    { rows: '[{"cnt": 7, "lo": -0.5, "hi": "5", "mean": 5.625}]' },
  ],
  // MaxAggregator compares with the ORDER BY comparator, which refuses the
  // null of d32 (typeof "object").
  ['SELECT VALUE MAX(c.n) FROM c WHERE c.id IN ("d01", "d31", "d34", "d32")', { rejects: /Tried to compare an object type/ }],
  // ORDER BY over undefined and booleans, numbers, strings (mixed types).
  ['SELECT VALUE c.id FROM c WHERE c.id >= "d31" ORDER BY c.n', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.id >= "d31" ORDER BY c.n DESC', orderByRefused],
  ['SELECT c.id, c.v FROM c WHERE c.kind = "mix" ORDER BY c.v', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.kind = "mix" ORDER BY c.v DESC', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.kind = "mix" OR c.kind = "order" ORDER BY c.v', orderByRefused],
  // An array as the ORDER BY value.
  ['SELECT VALUE c.id FROM c WHERE c.kind = "fruit" ORDER BY [c.cat, c.n]', orderByRefused],
  // cust is null for d18.
  ['SELECT VALUE c.id FROM c WHERE c.kind = "order" ORDER BY c.cust, c.id', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.kind = "order" ORDER BY c.cust DESC, c.id DESC', orderByRefused],
  ['SELECT TOP 1 VALUE c.id FROM c WHERE c.kind = "order" ORDER BY c.cust DESC', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.kind = "order" ORDER BY c.cust OFFSET 1 LIMIT 4', orderByRefused],
  // i.q is undefined for d17's {"p": "pen"}.
  ["SELECT c.id, i.p, i.q FROM c JOIN i IN c.items ORDER BY i.p, i.q DESC, c.id", orderByRefused],
  // flag is undefined for d06.
  ['SELECT VALUE c.id FROM c WHERE c.kind = "fruit" ORDER BY c.flag, c.id', orderByRefused],
  // Objects and arrays as ORDER BY values.
  ['SELECT VALUE c.obj FROM c WHERE c.kind = "fruit" AND c.cat = "a" ORDER BY c.obj DESC', orderByRefused],
  ['SELECT VALUE c.id FROM c WHERE c.kind = "fruit" ORDER BY c.tags DESC, c.id', orderByRefused],
  // Undefined for all but d40.
  ['SELECT VALUE c.id FROM c ORDER BY c.nested.deep.deeper["value"] DESC, c.id OFFSET 0 LIMIT 3', orderByRefused],
  // s is undefined for d38.
  ['SELECT c.id FROM c WHERE c.cat = "d" OR c.cat = null ORDER BY c.s', orderByRefused],
  // The null tag of d32.
  ["SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags ORDER BY t", orderByRefused],
  // v of the mix documents: every type.
  ['SELECT TOP 2 * FROM c WHERE c.kind = "mix" ORDER BY c.v DESC', orderByRefused],
  // Unordered DISTINCT.
  ["SELECT DISTINCT VALUE c.cat FROM c", falsyDropped],
  ["SELECT DISTINCT VALUE t FROM c JOIN t IN c.tags", falsyDropped],
  ['SELECT DISTINCT VALUE c.n FROM c WHERE c.kind = "fruit"', falsyDropped],
  ["SELECT DISTINCT VALUE c.v FROM c", falsyDropped],
  ["SELECT DISTINCT VALUE ARRAY_LENGTH(c.tags) FROM c", falsyDropped],
  // TOP, OFFSET and LIMIT over rows in no defined order (no ORDER BY: plain
  // rows, DISTINCT values, groups): the corpus takes key order or the
  // smallest values, the SDK takes rows as they arrive, several ranges'
  // pages at a time. The candidates are every row of the query without them
  // (cat "a" to "d"; null is dropped, see above).
  ["SELECT DISTINCT TOP 3 VALUE c.cat FROM c", { pick: 3, from: '["a", "b", "c", "d"]' }],
  ["SELECT DISTINCT VALUE c.cat FROM c OFFSET 1 LIMIT 2", { pick: 2, from: '["a", "b", "c", "d"]' }],
  ["SELECT TOP 4 VALUE c.id FROM c", { pick: 4, from: JSON.stringify(scanOrder) }],
  ["SELECT VALUE c.id FROM c OFFSET 39 LIMIT 5", { pick: 1, from: JSON.stringify(scanOrder) }],
  // The SDK's hybrid pipeline takes each component row's payload as an
  // object (HybridSearchQueryResult.create, dist/esm/request/
  // hybridSearchQueryResult.js): a SELECT VALUE of a scalar fails there in
  // either of the two row formats it reads.
  ['SELECT TOP 3 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.s, "zzz")', { rejects: /componentScores must exist|payload must exist/ }],
  [
    'SELECT TOP 2 c.cat, COUNT(1) AS n FROM c WHERE c.kind = "fruit" GROUP BY c.cat',
    { pick: 2, from: '[{"cat": "a", "n": 4}, {"cat": "b", "n": 3}, {"cat": "c", "n": 3}]' },
  ],
  [
    "SELECT c.cat, COUNT(1) AS n FROM c WHERE c.kind = @k GROUP BY c.cat OFFSET @o LIMIT @l",
    { pick: 1, from: '[{"cat": "a", "n": 4}, {"cat": "b", "n": 3}, {"cat": "c", "n": 3}]' },
  ],
  [
    'SELECT c.cust, COUNT(1) AS n FROM c WHERE c.kind = "order" GROUP BY c.cust OFFSET 2 LIMIT 3',
    {
      pick: 3,
      from: '[{"cust": null, "n": 1}, {"cust": "ann", "n": 3}, {"cust": "bob", "n": 3}, {"cust": "cat", "n": 1}, {"cust": "dan", "n": 1}, {"cust": "eve", "n": 1}]',
    },
  ],
  ['SELECT TOP 3 VALUE c.cust FROM c WHERE c.kind = "order" GROUP BY c.cust', { pick: 3, from: '[null, "ann", "bob", "cat", "dan", "eve"]' }],
  // The pipeline applies TOP before OFFSET and LIMIT, where the corpus
  // applies OFFSET, then LIMIT, then TOP: d01 d02 (TOP 2), then OFFSET 1.
  ["SELECT TOP 2 VALUE c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 5", { rows: '["d02"]', ordered: true }],
]);

const systemProperties = ["_rid", "_self", "_etag", "_attachments", "_ts"];

function collectKeys(v, keys) {
  if (Array.isArray(v)) v.forEach((e) => collectKeys(e, keys));
  else if (v !== null && typeof v === "object") {
    for (const [k, m] of Object.entries(v)) {
      keys.add(k);
      collectKeys(m, keys);
    }
  }
}

// canonical renders a JSON value with sorted object keys, without the named
// keys at any depth, so that rows compare as JSON values.
function canonical(v, drop) {
  const norm = (x) => {
    if (Array.isArray(x)) return x.map(norm);
    if (x !== null && typeof x === "object") {
      const out = {};
      for (const k of Object.keys(x).sort()) if (!drop.includes(k)) out[k] = norm(x[k]);
      return out;
    }
    return x;
  };
  return JSON.stringify(norm(v));
}

// compareRows compares rows as the golden test does: the actual rows,
// stripped of the system properties (the rule below), must equal the
// expected rows in order when ordered is set, as a multiset otherwise.
//
// The system properties rule: the server adds _rid, _self, _etag,
// _attachments and _ts to every stored document, so rows that are whole
// documents (SELECT *, SELECT c, SELECT VALUE c) carry them. Each of those
// five keys that the expected JSON never mentions (as an object key at any
// depth) is removed from every object of the actual rows, at any depth;
// nothing else is touched.
function compareRows(expect, rows, ordered) {
  const exp = JSON.parse(expect);
  const keys = new Set();
  collectKeys(exp, keys);
  const drop = systemProperties.filter((k) => !keys.has(k));
  const want = exp.map((e) => canonical(e, []));
  const have = rows.map((r) => canonical(r, drop));
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  const ok = ordered ? same(want, have) : same([...want].sort(), [...have].sort());
  return { ok, want, have };
}

// picks tells whether rows are n distinct rows of the candidates.
function picks(rows, n, from) {
  if (rows.length !== n) return false;
  const left = JSON.parse(from).map((v) => canonical(v, []));
  for (const r of rows) {
    const i = left.indexOf(canonical(r, []));
    if (i < 0) return false;
    left.splice(i, 1);
  }
  return true;
}

// queryParams turns a params JSON object into SDK parameters, naming each
// with a leading @ (the corpus also has names without it).
function queryParams(params) {
  if (!params) return [];
  return Object.entries(JSON.parse(params)).map(([name, value]) => ({ name: name.startsWith("@") ? name : "@" + name, value }));
}

function errorOf(e) {
  return { status: e.code, message: String(e.body?.message ?? e.message) };
}

let server;
let client;
let container;
const cases = parseCorpus();

before(async () => {
  server = await startServer();
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  const { database } = await client.databases.createIfNotExists({ id: "corpus" });
  ({ container } = await database.containers.createIfNotExists(
    { id: "docs", partitionKey: { paths: ["/id"] } },
    { offerThroughput: 24000 },
  ));
  for (const doc of JSON.parse(readFileSync(new URL("dataset.json", testdata), "utf8"))) {
    await container.items.create(doc);
  }
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

test("the corpus dataset spreads over 4 ranges, each read in creation order", async () => {
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 4);
  const order = [];
  for (const r of ranges) {
    const res = await rawRequest(server.endpoint, "GET", "/dbs/corpus/colls/docs/docs", {
      "x-ms-documentdb-partitionkeyrangeid": r.id,
      "x-ms-max-item-count": "100",
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ms-continuation"), null);
    assert.ok(res.body.Documents.length > 0, `range ${r.id} holds no document`);
    order.push(...res.body.Documents.map((d) => d.id));
  }
  assert.deepEqual(order, scanOrder);
});

for (const forceQueryPlan of [false, true]) {
  test(`the golden corpus through the JS SDK (forceQueryPlan: ${forceQueryPlan}, maxItemCount: 3)`, async () => {
    assert.ok(cases.length >= 370, `only ${cases.length} cases`);
    const failures = [];
    const gapsSeen = [];
    const gapsPassing = [];
    const refusedPlans = [];
    const sdkMerged = [];
    let passed = 0;
    for (const c of cases) {
      const expect = keyOrderExpect.get(c.query) ?? c.expect;
      const ordered = topLevelOrderBy(c.query) && !c.anyOrd;
      const planRefused = forceQueryPlan && notPlannable.has(c.query);
      const merge = forceQueryPlan ? sdkMerge.get(c.query) : undefined;
      let problem = "";
      let rows;
      let error;
      try {
        ({ resources: rows } = await container.items
          .query({ query: c.query, parameters: queryParams(c.params) }, { forceQueryPlan, maxItemCount: 3 })
          .fetchAll());
      } catch (e) {
        error = errorOf(e);
      }
      if (c.err || planRefused) {
        const want = c.err || notPlannable.get(c.query);
        if (!error) problem = `want a 400 containing ${JSON.stringify(want)}, got ${rows.length} rows`;
        else if (error.status !== 400 || !error.message.includes(want))
          problem = `want a 400 containing ${JSON.stringify(want)}, got ${error.status}: ${error.message}`;
        else if (planRefused) refusedPlans.push(c.line);
      } else if (merge?.rejects) {
        if (!error) problem = `want the SDK to throw ${merge.rejects}, got ${rows.length} rows`;
        else if (error.status !== undefined || !merge.rejects.test(error.message))
          problem = `want the SDK to throw ${merge.rejects}, got ${error.status}: ${error.message}`;
      } else if (error) {
        problem = `${error.status}: ${error.message}`;
      } else if (merge?.pick !== undefined) {
        if (!picks(rows, merge.pick, merge.from))
          problem = `want ${merge.pick} distinct rows of ${merge.from}, got ${JSON.stringify(rows)}`;
      } else {
        let want = merge ? merge.rows : expect;
        if (typeof want === "function") want = JSON.stringify(want(expect));
        const ord = merge ? !!merge.ordered : ordered;
        const { ok, want: w, have } = compareRows(want, rows, ord);
        if (!ok) problem = `(ordered ${ord})\n   got [${have.join(", ")}]\n  want [${w.join(", ")}]`;
      }
      if (merge && problem === "") sdkMerged.push(c.line);
      const gap = serverGaps.get(c.query);
      if (gap !== undefined && problem === "") gapsPassing.push(c.line);
      else if (gap !== undefined) gapsSeen.push(`queries.txt:${c.line}: known server gap (${gap}): ${problem}`);
      if (problem === "") passed++;
      else if (gap === undefined) failures.push(`queries.txt:${c.line}: ${c.query}${c.params ? "\n  params " + c.params : ""}\n  ${problem}`);
    }
    for (const g of gapsSeen) console.log(g);
    const errorCases = cases.filter((c) => c.err).length;
    console.log(
      `forceQueryPlan ${forceQueryPlan}: ${cases.length} cases (${cases.length - errorCases} with rows, ${errorCases} expecting errors); ` +
        `${passed} pass (of which ${refusedPlans.length} plans refused as expected: lines ${refusedPlans.join(" ")}; ` +
        `${sdkMerged.length} as the SDK's own merge gives them: lines ${sdkMerged.join(" ")}), ` +
        `${gapsSeen.length} known server gaps, ${failures.length} fail`,
    );
    for (const q of [...keyOrderExpect.keys(), ...serverGaps.keys(), ...notPlannable.keys(), ...sdkMerge.keys()]) {
      assert.ok(cases.some((c) => c.query === q), `a table names a query that is not in the corpus: ${q}`);
    }
    assert.deepEqual(gapsPassing, [], "cases listed in serverGaps now pass (remove them)");
    assert.equal(
      failures.length,
      0,
      `${failures.length} cases fail, lines ${failures.map((f) => f.match(/:(\d+):/)[1]).join(" ")}:\n${failures.join("\n")}`,
    );
  });
}
