import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

// Queries over databases and containers, and the conflicts feed, through
// the JavaScript SDK.
let server;
let client;

before(async () => {
  server = await startServer(["--no-throttle"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

test("databases, containers and conflicts as the SDK queries and reads them", async () => {
  for (const id of ["one", "two"]) {
    const { database } = await client.databases.createIfNotExists({ id });
    await database.containers.createIfNotExists({ id: "a", partitionKey: { paths: ["/pk"] } });
    await database.containers.createIfNotExists({ id: "b", partitionKey: { paths: ["/pk"] } });
  }
  const { resources: dbs } = await client.databases
    .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: "two" }] })
    .fetchAll();
  assert.deepEqual(dbs.map((d) => d.id), ["two"]);
  const { resources: colls } = await client.database("one").containers.query("SELECT c.id FROM c ORDER BY c.id DESC").fetchAll();
  assert.deepEqual(colls, [{ id: "b" }, { id: "a" }]);
  const { resources: conflicts } = await client.database("one").container("a").conflicts.readAll().fetchAll();
  assert.deepEqual(conflicts, []);
});

test("deleteAllItemsForPartitionKey deletes one logical partition and nothing else", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "pkdelete" });
  const { container } = await database.containers.createIfNotExists({ id: "c", partitionKey: { paths: ["/pk"] } });
  for (let i = 0; i < 250; i++) await container.items.create({ id: `x${i}`, pk: i % 5 === 0 ? "keep" : "gone" });
  const res = await container.deleteAllItemsForPartitionKey("gone");
  assert.equal(res.statusCode, 200);
  const { resources: left } = await container.items.query("SELECT VALUE c.pk FROM c").fetchAll();
  assert.equal(left.length, 50);
  assert.ok(left.every((pk) => pk === "keep"));
  const { statusCode } = await container.item("x1", "gone").read();
  assert.equal(statusCode, 404);
});

test("a container created without a partition key shows the system key, and the SDK's bulk and reads route with it", async () => {
  const { rawRequest } = await import("./server.js");
  await client.databases.createIfNotExists({ id: "legacy" });
  const created = await rawRequest(server.endpoint, "POST", "/dbs/legacy/colls", { "content-type": "application/json" }, emulatorKey, { id: "old" });
  assert.equal(created.status, 201);
  assert.deepEqual(created.body.partitionKey, { paths: ["/_partitionKey"], kind: "Hash", systemKey: true });
  const container = client.database("legacy").container("old");
  // Bulk names the key of each operation: none, in a container with the system key.
  const ops = Array.from({ length: 30 }, (_, i) => ({ operationType: "Create", partitionKey: [], resourceBody: { id: `b${i}`, n: i } }));
  const results = await container.items.executeBulkOperations(ops);
  assert.equal(results.filter((r) => r.response?.statusCode !== 201).length, 0, JSON.stringify(results.slice(0, 2)));
  // A plain create finds no key in the document and sends none either.
  const { statusCode } = await container.items.create({ id: "plain", n: -1 });
  assert.equal(statusCode, 201);
  const { resources } = await container.items.readAll().fetchAll();
  assert.equal(resources.length, 31);
  const { resource } = await container.item("b7").read();
  assert.equal(resource.n, 7);
  // Its definition sent back (as a client that replaces the container does) keeps it what it is.
  const { resource: def } = await container.read();
  const replaced = await container.replace({ ...def, indexingPolicy: { indexingMode: "consistent", includedPaths: [{ path: "/*" }], excludedPaths: [] } });
  assert.deepEqual(replaced.resource.partitionKey.systemKey, true);
});
