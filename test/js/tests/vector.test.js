// Vector, full-text and hybrid search through the JavaScript SDK. The
// cases follow the SDK's own tests, written here anew:
//   - policies: azure-sdk-for-js sdk/cosmosdb/cosmos/test/public/functional/vectorEmbeddingPolicy.spec.ts
//     ("validate VectorEmbeddingPolicy", "should fail to create vector indexing policy",
//     "should fail to replace vector indexing policy") and azure-sdk-for-python
//     sdk/cosmos/azure-cosmos/tests/test_vector_policy_async.py (the service's error texts);
//   - vector queries: the same spec's "Vector Search Query" cases (ORDER BY VectorDistance
//     with TOP, OFFSET LIMIT, DISTINCT and filters; euclidean ascending, dotproduct descending);
//   - full-text and hybrid: sdk/cosmosdb/cosmos/test/public/integration/fullTextSearch.spec.ts
//     (ORDER BY RANK FullTextScore and RRF with TOP and OFFSET LIMIT, run with
//     allowUnboundedNonStreamingQueries), on a corpus of our own whose BM25 ranking is computed
//     here independently.
// Every query runs twice: as the SDK sends it by default (the server runs it whole) and with
// forceQueryPlan (the SDK plans it, runs the component and statistics queries per range and
// fuses the results itself).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

let server;
let client;
let database;

before(async () => {
  server = await startServer();
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  ({ database } = await client.databases.createIfNotExists({ id: "search" }));
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

async function expect400(promise, text) {
  await assert.rejects(promise, (e) => {
    assert.equal(e.code, 400, e.message);
    if (text) assert.ok(String(e.body?.message ?? e.message).includes(text), `${e.body?.message ?? e.message} lacks ${text}`);
    return true;
  });
}

test("vector embedding policy and vector indexes round-trip", async () => {
  const vectorEmbeddingPolicy = {
    vectorEmbeddings: [
      { path: "/vector1", dataType: "float32", dimensions: 500, distanceFunction: "euclidean" },
      { path: "/vector2", dataType: "int8", dimensions: 200, distanceFunction: "dotproduct" },
      { path: "/vector3", dataType: "uint8", dimensions: 400, distanceFunction: "cosine" },
    ],
  };
  const indexingPolicy = {
    vectorIndexes: [
      { path: "/vector1", type: "flat" },
      { path: "/vector2", type: "quantizedFlat", quantizationByteSize: 64 },
      { path: "/vector3", type: "diskANN", indexingSearchListSize: 100 },
    ],
    excludedPaths: [{ path: "/vector1/*" }, { path: "/vector2/*" }, { path: "/vector3/*" }],
  };
  const { resource } = await database.containers.create({
    id: "policy", partitionKey: { paths: ["/id"] }, vectorEmbeddingPolicy, indexingPolicy,
  });
  assert.deepEqual(resource.vectorEmbeddingPolicy, vectorEmbeddingPolicy);
  assert.deepEqual(resource.indexingPolicy.vectorIndexes, indexingPolicy.vectorIndexes);
  const { resource: read } = await database.container("policy").read();
  assert.deepEqual(read.vectorEmbeddingPolicy, vectorEmbeddingPolicy);
  assert.equal(read.vectorEmbeddingPolicy.vectorEmbeddings[2].path, "/vector3");

  // The vector indexes cannot change in a replace (vectorEmbeddingPolicy.spec.ts).
  await expect400(
    database.container("policy").replace({ id: "policy", partitionKey: { paths: ["/id"] },
      indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "quantizedFlat" }] } }),
    "Vector Indexing Policy cannot be changed in Collection Replace");
  // Nor the embedding policy.
  await expect400(
    database.container("policy").replace({ id: "policy", partitionKey: { paths: ["/id"] }, indexingPolicy,
      vectorEmbeddingPolicy: { vectorEmbeddings: [vectorEmbeddingPolicy.vectorEmbeddings[0]] } }),
    "Vector Embedding Policy cannot be changed");
  // A replace that leaves the vector settings as they are succeeds, and
  // one that omits the embedding policy keeps it.
  const { resource: replaced } = await database.container("policy").replace({
    id: "policy", partitionKey: { paths: ["/id"] }, indexingPolicy, defaultTtl: 3600 });
  assert.deepEqual(replaced.vectorEmbeddingPolicy, vectorEmbeddingPolicy);
  assert.equal(replaced.defaultTtl, 3600);
});

test("invalid vector policies are refused with the service's messages", async () => {
  const embedding = { path: "/vector1", dataType: "float32", dimensions: 500, distanceFunction: "euclidean" };
  // An index without an embedding (test_vector_policy_async.py, vectorEmbeddingPolicy.spec.ts).
  await expect400(database.containers.create({ id: "bad1", partitionKey: { paths: ["/id"] },
    indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] } }),
  "Vector Indexing Policy's path::\\/vector1 not matching in Embedding's path");
  await expect400(database.containers.create({ id: "bad2", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [embedding] },
    indexingPolicy: { vectorIndexes: [{ path: "/vector2", type: "flat" }] } }),
  "vector2 not matching in Embedding's path");
  await expect400(database.containers.create({ id: "bad3", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [embedding] },
    indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "notFlat" }] } }),
  "Index Type::notFlat is invalid");
  await expect400(database.containers.create({ id: "bad4", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...embedding, dataType: "float33" }] } }),
  "Vector Embedding Policy has invalid DataType");
  await expect400(database.containers.create({ id: "bad5", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...embedding, dimensions: -1 }] } }),
  "Vector Embedding Policy has invalid Dimensions:-1, it should be positive integer");
  await expect400(database.containers.create({ id: "bad6", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...embedding, dimensions: 5000 }] } }),
  "Vector Embedding Policy has Dimensions:5000 which is more than max:4096");
  await expect400(database.containers.create({ id: "bad7", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...embedding, distanceFunction: "handMeasured" }] } }),
  "Vector Embedding Policy has invalid DistanceFunction:handMeasured");
  // flat indexes take at most 505 dimensions (nosql/vector-search.md).
  await expect400(database.containers.create({ id: "bad8", partitionKey: { paths: ["/id"] },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ ...embedding, dimensions: 600 }] },
    indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] } }),
  "at most 505 dimensions");
  // A full-text index needs its path in the full-text policy.
  await expect400(database.containers.create({ id: "bad9", partitionKey: { paths: ["/id"] },
    fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }] },
    indexingPolicy: { fullTextIndexes: [{ path: "/title" }] } }));
});

// Runs query both ways and returns the two result lists.
async function both(container, query, options = {}) {
  const out = [];
  for (const forceQueryPlan of [false, true]) {
    const { resources } = await container.items
      .query(query, { allowUnboundedNonStreamingQueries: true, maxItemCount: 2, ...options, forceQueryPlan })
      .fetchAll();
    out.push(resources);
  }
  return out;
}

test("ORDER BY VectorDistance across partitions", async () => {
  const { container } = await database.containers.create(
    {
      id: "vectors", partitionKey: { paths: ["/id"] },
      vectorEmbeddingPolicy: { vectorEmbeddings: [
        { path: "/vector1", dataType: "float32", dimensions: 2, distanceFunction: "euclidean" },
        { path: "/vector2", dataType: "float32", dimensions: 2, distanceFunction: "dotproduct" },
      ] },
      indexingPolicy: { vectorIndexes: [{ path: "/vector1", type: "flat" }] },
    },
    { offerThroughput: 24000 },
  );
  // Three items as in vectorEmbeddingPolicy.spec.ts, and more so that
  // every partition holds some.
  const vecs = [[0.056419, -0.021141], [0.066419, -0.031141], [0.076419, -0.041141]];
  for (let i = 3; i < 40; i++) vecs.push([0.056419 + i * 0.01, -0.021141 - i * 0.01]);
  for (const [i, v] of vecs.entries()) {
    await container.items.create({ id: `${i + 1}`, vector1: v, vector2: v, even: i % 2 === 0 });
  }
  const q = [0.056419, -0.021141];
  const euclid = (v) => Math.hypot(v[0] - q[0], v[1] - q[1]);
  const dot = (v) => v[0] * q[0] + v[1] * q[1];
  const byEuclid = vecs.map((v, i) => [`${i + 1}`, euclid(v)]).sort((a, b) => a[1] - b[1]);
  const byDot = vecs.map((v, i) => [`${i + 1}`, dot(v)]).sort((a, b) => b[1] - a[1]);

  const checkOrder = (rows, want, desc, label) => {
    assert.deepEqual(rows.map((r) => r.Id), want.map((w) => w[0]), label);
    for (let i = 1; i < rows.length; i++) {
      const ok = desc ? rows[i - 1].similarityScore >= rows[i].similarityScore : rows[i - 1].similarityScore <= rows[i].similarityScore;
      assert.ok(ok, `${label}: not ${desc ? "descending" : "ascending"} at ${i}`);
    }
  };
  const vd1 = "VectorDistance([0.056419, -0.021141], c.vector1, true, {distanceFunction:'euclidean'})";
  for (const [query, want, desc] of [
    // The policy's euclidean: closest (smallest) first.
    [`SELECT c.id AS Id, ${vd1} AS similarityScore FROM c ORDER BY ${vd1}`, byEuclid, false],
    [`SELECT DISTINCT c.id AS Id, ${vd1} AS similarityScore FROM c ORDER BY ${vd1}`, byEuclid, false],
    // dotProduct given as an option: highest first.
    ["SELECT c.id AS Id, VectorDistance([0.056419, -0.021141], c.vector2, true, {distanceFunction:'dotProduct'}) AS similarityScore FROM c ORDER BY VectorDistance([0.056419, -0.021141], c.vector1, true, {distanceFunction:'dotProduct'}) OFFSET 0 LIMIT 2", byDot.slice(0, 2), true],
    ["SELECT TOP 5 c.id AS Id, VectorDistance(c.vector2, [0.056419, -0.021141]) AS similarityScore FROM c ORDER BY VectorDistance(c.vector2, [0.056419, -0.021141])", byDot.slice(0, 5), true],
    ["SELECT DISTINCT TOP 2 c.id AS Id, VectorDistance([0.056419, -0.021141], c.vector2) AS similarityScore FROM c ORDER BY VectorDistance([0.056419, -0.021141], c.vector2)", byDot.slice(0, 2), true],
    ["SELECT c.id AS Id, VectorDistance(c.vector1, [0.056419, -0.021141]) AS similarityScore FROM c ORDER BY VectorDistance(c.vector1, [0.056419, -0.021141]) OFFSET 3 LIMIT 4", byEuclid.slice(3, 7), false],
  ]) {
    const [plain, planned] = await both(container, query);
    checkOrder(plain, want, desc, query);
    checkOrder(planned, want, desc, `${query} (query plan)`);
  }
  // A filter, as in the spec's "with filter in query" cases.
  const [plain, planned] = await both(container,
    `SELECT TOP 3 c.id AS Id, ${vd1} AS similarityScore FROM c WHERE c.even = true AND ${vd1} >= 0.0 ORDER BY ${vd1}`);
  const wantEven = byEuclid.filter(([id]) => (Number(id) - 1) % 2 === 0).slice(0, 3);
  checkOrder(plain, wantEven, false, "filtered");
  checkOrder(planned, wantEven, false, "filtered (query plan)");

  // The index metrics name the vector index and say a scan was used.
  const res = await container.items.query(`SELECT TOP 1 c.id FROM c ORDER BY ${vd1}`, { populateIndexMetrics: true }).fetchNext();
  assert.match(JSON.stringify(res.indexMetrics ?? ""), /vector1 \(flat vector index; scan: \d+ vectors compared\)/);
  assert.ok(res.requestCharge > 0);
});

// A corpus whose words stem to themselves (or whose stems are listed), so
// that BM25 can be computed here without an analyser.
const corpus = [
  "john walked to the red barn",
  "john and mary met john again",
  "the united states border",
  "mary visited the united states with john",
  "a red car in the united states",
  "nothing to see here",
  "red red red",
  "john",
  "states of matter and united fronts",
  "the car of john is red",
  "mary had a little lamb",
  "blue sky over the barn",
];
// The English stop words among them (the service's list, which Parsec uses).
const stop = new Set(["to", "the", "and", "again", "with", "a", "in", "nothing", "see", "here", "of", "is", "had", "little", "over"]);
const stemmed = { walked: "walk", united: "unit", states: "state", visited: "visit", fronts: "front", mary: "mari" };
const terms = (text) => text.split(" ").filter((w) => !stop.has(w)).map((w) => stemmed[w] ?? w);

// BM25 with k1 = 1.2, b = 0.75 and statistics over the whole container.
function bm25(field, docs, queryTerms) {
  const N = docs.length;
  const lens = docs.map((d) => terms(d[field] ?? "").length);
  const avgdl = lens.reduce((a, b) => a + b, 0) / N;
  return docs.map((d, i) => {
    const t = terms(d[field] ?? "");
    let s = 0;
    for (const q of queryTerms) {
      const n = docs.filter((x) => terms(x[field] ?? "").includes(q)).length;
      const idf = Math.log(1 + (N - n + 0.5) / (n + 0.5));
      const tf = t.filter((w) => w === q).length;
      if (tf > 0) s += idf * (tf * 2.2) / (tf + 1.2 * (1 - 0.75 + (0.75 * lens[i]) / avgdl));
    }
    return s;
  });
}

// Dense ranks (1 best), equal scores sharing one, as the SDKs rank RRF components.
function ranks(scores, desc) {
  const order = scores.map((s, i) => i).sort((a, b) => (desc ? scores[b] - scores[a] : scores[a] - scores[b]));
  const r = new Array(scores.length);
  let rank = 0;
  order.forEach((i, j) => {
    if (j === 0 || scores[i] !== scores[order[j - 1]]) rank++;
    r[i] = rank;
  });
  return r;
}

test("full-text search: FullTextContains, ORDER BY RANK FullTextScore and RRF", async () => {
  const { container } = await database.containers.create(
    {
      id: "text", partitionKey: { paths: ["/id"] },
      fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/text", language: "en-US" }, { path: "/title", language: "en-US" }] },
      indexingPolicy: { fullTextIndexes: [{ path: "/text" }] },
      vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", dimensions: 2, distanceFunction: "cosine" }] },
    },
    { offerThroughput: 24000 },
  );
  const docs = corpus.map((text, i) => ({ id: `${i}`, index: i, text, title: i % 3 === 0 ? "john report" : "report", v: [Math.cos(i / 3), Math.sin(i / 3)] }));
  for (const d of docs) await container.items.create(d);

  // WHERE filters (stemmed: "walk" finds "walked"; phrases keep their order).
  for (const [where, want] of [
    ["FullTextContains(c.text, 'walk')", [0]],
    ["FullTextContains(c.text, 'United States')", [2, 3, 4]],
    ["FullTextContainsAll(c.text, 'john', 'mary')", [1, 3]],
    ["FullTextContainsAny(c.text, 'lamb', 'sky')", [10, 11]],
    ["FullTextContains(c.text, {'term': 'jon', 'distance': 1})", [0, 1, 3, 7, 9]],
  ]) {
    const [plain, planned] = await both(container, `SELECT VALUE c.index FROM c WHERE ${where}`);
    assert.deepEqual([...plain].sort((a, b) => a - b), want, where);
    assert.deepEqual([...planned].sort((a, b) => a - b), want, `${where} (query plan)`);
  }

  // ORDER BY RANK FullTextScore: BM25 over the whole container, best first.
  const john = bm25("text", docs, ["john"]);
  const wantJohn = docs.map((d, i) => [i, john[i]]).filter(([, s]) => s > 0).sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([i]) => i);
  for (const [query, want] of [
    ["SELECT c.index AS Index FROM c WHERE FullTextContains(c.text, 'john') ORDER BY RANK FullTextScore(c.text, ['john'])", wantJohn],
    ["SELECT TOP 2 c.index AS Index FROM c WHERE FullTextContains(c.text, 'john') ORDER BY RANK FullTextScore(c.text, 'john')", wantJohn.slice(0, 2)],
    ["SELECT c.index AS Index FROM c WHERE FullTextContains(c.text, 'john') ORDER BY RANK FullTextScore(c.text, ['john']) OFFSET 1 LIMIT 2", wantJohn.slice(1, 3)],
  ]) {
    const [plain, planned] = await both(container, query);
    assert.deepEqual(plain.map((r) => r.Index), want, query);
    assert.deepEqual(planned.map((r) => r.Index), want, `${query} (query plan)`);
  }

  // RRF of two text scores (fullTextSearch.spec.ts's shape). Each
  // component keeps its best TOP (or OFFSET + LIMIT) rows, the union is
  // ranked per component (equal scores share a rank) and fused as
  // Σ weight/(60 + rank), as the SDKs do. The filters keep the rows within
  // that window, so that the union is every matching row and the ranks
  // below are exact; BM25's statistics stay those of the whole container.
  const t1 = bm25("title", docs, ["john"]);
  const t2 = bm25("text", docs, ["red"]);
  const fuse = (rows, comps) => {
    const rk = comps.map(({ scores }) => ranks(rows.map((i) => scores[i]), true));
    return rows.map((i, j) => [i, comps.reduce((a, { w }, c) => a + w / (60 + rk[c][j]), 0)]).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  };
  const matching = docs.map((d, i) => i).filter((i) => t1[i] > 0 || t2[i] > 0);
  assert.equal(matching.length, 5);
  const fused = fuse(matching, [{ scores: t1, w: 1 }, { scores: t2, w: 1 }]);
  const rrf = "RRF(FullTextScore(c.title, ['john']), FullTextScore(c.text, ['red']))";
  const where = "WHERE FullTextContains(c.title, 'john') OR FullTextContains(c.text, 'red')";
  for (const [query, want] of [
    [`SELECT TOP 5 c.index AS Index FROM c ${where} ORDER BY RANK ${rrf}`, fused],
    [`SELECT c.index AS Index FROM c ${where} ORDER BY RANK ${rrf} OFFSET 1 LIMIT 4`, fused.slice(1)],
  ]) {
    const [plain, planned] = await both(container, query);
    // Rows of equal fused score may come in either order from the SDK's
    // sort: compare the scores position by position.
    const wantScores = want.map(([, s]) => s.toFixed(12));
    const score = new Map(fused.map(([i, s]) => [i, s.toFixed(12)]));
    assert.deepEqual(plain.map((r) => score.get(r.Index)), wantScores, query);
    assert.deepEqual(planned.map((r) => score.get(r.Index)), wantScores, `${query} (query plan)`);
  }

  // Hybrid: RRF of a vector and a text score, with weights.
  const cos = docs.map((d) => d.v[0] / Math.hypot(...d.v));
  const withJohn = docs.map((d, i) => i).filter((i) => john[i] > 0);
  const hybrid = fuse(withJohn, [{ scores: cos, w: 2 }, { scores: john, w: 1 }]);
  const hq = "SELECT TOP 5 c.index AS Index FROM c WHERE FullTextContains(c.text, 'john') ORDER BY RANK RRF(VectorDistance(c.v, [1, 0]), FullTextScore(c.text, 'john'), [2, 1])";
  const [hp, hpl] = await both(container, hq);
  assert.deepEqual(hp.map((r) => r.Index), hybrid.map(([i]) => i), hq);
  assert.deepEqual(hpl.map((r) => r.Index), hybrid.map(([i]) => i), `${hq} (query plan)`);

  // What the service refuses.
  await expect400(container.items.query("SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, 'john') DESC").fetchAll(),
    "Specifying a sort order (ASC or DESC) in the ORDER BY RANK clause is not allowed");
  await expect400(container.items.query("SELECT FullTextScore(c.text, 'john') AS s FROM c").fetchAll(), "FullTextScore");
  await expect400(container.items.query(`SELECT ${rrf} AS s FROM c`).fetchAll(), "RRF");
});
