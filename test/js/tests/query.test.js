import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

let server;
let client;
let container;

before(async () => {
  server = await startServer();
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  const { database } = await client.databases.createIfNotExists({ id: "query" });
  ({ container } = await database.containers.createIfNotExists(
    { id: "c", partitionKey: { paths: ["/pk"] } },
    { offerThroughput: 24000 },
  ));
  const ops = [];
  for (let n = 0; n < 60; n++) {
    ops.push({ operationType: "Create", partitionKey: `k${n % 20}`, resourceBody: { id: `${n}`, pk: `k${n % 20}`, n, grp: `g${n % 3}` } });
  }
  const res = await container.items.executeBulkOperations(ops);
  assert.equal(res.filter((r) => r.response?.statusCode !== 201).length, 0);
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

// Each query runs twice: as the SDK sends it by default (one request, the
// server merges every partition), and with forceQueryPlan (the SDK fetches
// the query plan, queries each range with the rewritten query, and merges).
const cases = [
  ["SELECT VALUE c.n FROM c ORDER BY c.n DESC OFFSET 0 LIMIT 5", [59, 58, 57, 56, 55]],
  ["SELECT TOP 4 c.n FROM c ORDER BY c.grp ASC, c.n DESC", [{ n: 57 }, { n: 54 }, { n: 51 }, { n: 48 }]],
  ["SELECT VALUE COUNT(1) FROM c", [60]],
  ["SELECT VALUE SUM(c.n) FROM c WHERE c.grp = 'g2'", [610]],
  ["SELECT DISTINCT VALUE c.grp FROM c", null], // order unspecified: compared as a set
  ["SELECT * FROM c WHERE c.pk = 'k3' ORDER BY c.n", null],
];

for (const forceQueryPlan of [false, true]) {
  test(`queries across 4 partitions (forceQueryPlan: ${forceQueryPlan})`, async () => {
    for (const [q, want] of cases) {
      const { resources } = await container.items.query(q, { forceQueryPlan, maxItemCount: 3 }).fetchAll();
      if (q.startsWith("SELECT DISTINCT")) {
        assert.deepEqual([...resources].sort(), ["g0", "g1", "g2"], q);
      } else if (q.includes("c.pk = 'k3'")) {
        assert.deepEqual(resources.map((d) => d.n), [3, 23, 43], q);
      } else {
        assert.deepEqual(resources, want, q);
      }
    }
  });
}

// MAKELIST and MAKESET across partitions, merged by the server and by the
// SDK from the query plan; the order of the values is unspecified.
for (const forceQueryPlan of [false, true]) {
  test(`MAKELIST and MAKESET across 4 partitions (forceQueryPlan: ${forceQueryPlan})`, async () => {
    const num = (a, b) => a - b;
    const { resources: sets } = await container.items.query("SELECT VALUE MAKESET(c.grp) FROM c", { forceQueryPlan }).fetchAll();
    assert.equal(sets.length, 1);
    assert.deepEqual([...sets[0]].sort(), ["g0", "g1", "g2"]);
    const { resources: lists } = await container.items.query("SELECT VALUE MAKELIST(c.n) FROM c WHERE c.n < 10", { forceQueryPlan }).fetchAll();
    assert.deepEqual([...lists[0]].sort(num), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const { resources: groups } = await container.items
      .query("SELECT c.grp, MAKELIST(c.n) AS ns FROM c WHERE c.n < 9 GROUP BY c.grp", { forceQueryPlan })
      .fetchAll();
    const byGroup = Object.fromEntries(groups.map((g) => [g.grp, [...g.ns].sort(num)]));
    assert.deepEqual(byGroup, { g0: [0, 3, 6], g1: [1, 4, 7], g2: [2, 5, 8] });
  });
}

test("a query with a syntax error is a 400 that names the position", async () => {
  await assert.rejects(container.items.query("SELECT * FORM c").fetchAll(), (e) => e.code === 400 && /line 1, column/.test(e.message));
});
