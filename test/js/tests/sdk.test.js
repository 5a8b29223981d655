import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey, rawRequest } from "./server.js";

let server;
let client;

before(async () => {
  server = await startServer(["--partition-max-rus", "10000"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

test("item CRUD, upsert, patch and etags", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "crud" });
  const { container } = await database.containers.createIfNotExists({
    id: "people",
    partitionKey: { paths: ["/city"] },
  });
  const { resource: def } = await container.read();
  assert.equal(def.partitionKey.version, 2);

  const created = await container.items.create({ id: "ann", city: "Oslo", age: 30 });
  assert.equal(created.statusCode, 201);
  assert.equal(created.resource.age, 30);
  assert.match(created.resource._etag, /^".*"$/);
  assert.ok(created.requestCharge > 0);

  await assert.rejects(container.items.create({ id: "ann", city: "Oslo" }), (e) => e.code === 409);
  // The same id in another partition is another item.
  await container.items.create({ id: "ann", city: "Rome", age: 41 });

  const { resource: read } = await container.item("ann", "Oslo").read();
  assert.equal(read.age, 30);
  const { resource: rome } = await container.item("ann", "Rome").read();
  assert.equal(rome.age, 41);

  const replaced = await container.item("ann", "Oslo").replace({ id: "ann", city: "Oslo", age: 31 });
  assert.equal(replaced.resource.age, 31);
  await assert.rejects(
    container.item("ann", "Oslo").replace({ id: "ann", city: "Oslo", age: 32 }, {
      accessCondition: { type: "IfMatch", condition: created.resource._etag },
    }),
    (e) => e.code === 412,
  );

  const up1 = await container.items.upsert({ id: "bo", city: "Oslo", age: 5 });
  assert.equal(up1.statusCode, 201);
  const up2 = await container.items.upsert({ id: "bo", city: "Oslo", age: 6 });
  assert.equal(up2.statusCode, 200);

  const patched = await container.item("bo", "Oslo").patch([
    { op: "incr", path: "/age", value: 10 },
    { op: "add", path: "/pets", value: ["cat"] },
    { op: "set", path: "/nick", value: "b" },
    { op: "move", from: "/nick", path: "/alias" },
  ]);
  assert.equal(patched.resource.age, 16);
  assert.deepEqual(patched.resource.pets, ["cat"]);
  assert.equal(patched.resource.alias, "b");
  assert.equal(patched.resource.nick, undefined);

  const del = await container.item("bo", "Oslo").delete();
  assert.equal(del.statusCode, 204);
  const gone = await container.item("bo", "Oslo").read();
  assert.equal(gone.statusCode, 404);
  assert.equal(gone.resource, undefined);
});

test("transactional batch: success and atomic failure", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "batch" });
  const { container } = await database.containers.createIfNotExists({
    id: "carts",
    partitionKey: { paths: ["/cart"] },
  });
  await container.items.create({ id: "milk", cart: "c1", qty: 1 });
  const ok = await container.items.batch(
    [
      { operationType: "Create", resourceBody: { id: "eggs", cart: "c1", qty: 12 } },
      { operationType: "Upsert", resourceBody: { id: "milk", cart: "c1", qty: 2 } },
      { operationType: "Read", id: "milk" },
    ],
    "c1",
  );
  assert.equal(ok.code, 200);
  assert.deepEqual(ok.result.map((r) => r.statusCode), [201, 200, 200]);
  assert.equal(ok.result[2].resourceBody.qty, 2);

  const bad = await container.items.batch(
    [
      { operationType: "Create", resourceBody: { id: "bread", cart: "c1" } },
      { operationType: "Create", resourceBody: { id: "eggs", cart: "c1" } },
    ],
    "c1",
  );
  assert.equal(bad.code, 207);
  assert.deepEqual(bad.result.map((r) => r.statusCode), [424, 409]);
  const bread = await container.item("bread", "c1").read();
  assert.equal(bread.statusCode, 404, "a failed batch must apply nothing");
});

test("bulk into a container with 4 physical partitions lands every item in its range", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "bulk" });
  const { container } = await database.containers.createIfNotExists(
    { id: "events", partitionKey: { paths: ["/device"] } },
    { offerThroughput: 24000 },
  );
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 4);

  const n = 400;
  const ops = [];
  for (let i = 0; i < n; i++) {
    ops.push({
      operationType: "Create",
      partitionKey: `dev-${i % 97}`,
      resourceBody: { id: `e${i}`, device: `dev-${i % 97}`, seq: i },
    });
  }
  // JS bulk hashes every key itself and sends each group to one range with
  // x-ms-documentdb-partitionkeyrangeid: a hash that differs from the server's
  // makes these requests fail, so all 400 succeeding checks our hashing.
  const results = await container.items.executeBulkOperations(ops);
  const failures = results.filter((r) => r.error || r.response.statusCode !== 201);
  assert.equal(failures.length, 0, JSON.stringify(failures.slice(0, 3)));

  for (const i of [0, 1, 96, 97, 250, 399]) {
    const { resource } = await container.item(`e${i}`, `dev-${i % 97}`).read();
    assert.equal(resource.seq, i);
  }
  // Every range holds its own share, and the ranges together hold everything
  // once (a read feed scoped to each range, paged by continuation token).
  let total = 0;
  for (const r of ranges) {
    let cont;
    let inRange = 0;
    do {
      const headers = { "x-ms-documentdb-partitionkeyrangeid": r.id, "x-ms-max-item-count": "50" };
      if (cont) headers["x-ms-continuation"] = cont;
      const res = await rawRequest(server.endpoint, "GET", "/dbs/bulk/colls/events/docs", headers);
      assert.equal(res.status, 200);
      assert.ok(res.body.Documents.length <= 50);
      inRange += res.body.Documents.length;
      cont = res.headers.get("x-ms-continuation");
    } while (cont);
    assert.ok(inRange > 0, `range ${r.id} is empty`);
    total += inRange;
  }
  assert.equal(total, n);

  // Bulk reads and upserts route the same way.
  const reads = await container.items.executeBulkOperations(
    [3, 50, 200].map((i) => ({ operationType: "Read", id: `e${i}`, partitionKey: `dev-${i % 97}` })),
  );
  assert.deepEqual(reads.map((r) => r.response.statusCode), [200, 200, 200]);
});

test("bulk into a V1-hashed container with 4 partitions, string and number keys", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "bulkv1" });
  const { container } = await database.containers.createIfNotExists(
    { id: "v1", partitionKey: { paths: ["/k"], version: 1 } },
    { offerThroughput: 24000 },
  );
  const { resource: def } = await container.read();
  assert.equal(def.partitionKey.version, 1);
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 4);
  const keys = [];
  for (let i = 0; i < 60; i++) keys.push(`key-${i}`);
  for (let i = 3; i < 60; i++) keys.push(i * 7.5);
  const ops = keys.map((k, i) => ({
    operationType: "Create",
    partitionKey: k,
    resourceBody: { id: `v${i}`, k },
  }));
  const results = await container.items.executeBulkOperations(ops);
  const failures = results.filter((r) => r.error || r.response.statusCode !== 201);
  assert.equal(failures.length, 0, JSON.stringify(failures.slice(0, 3)));
  const { resource } = await container.item("v70", keys[70]).read();
  assert.equal(resource.k, keys[70]);
});

test("offers: read and replace throughput, and the ranges follow", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "offers" });
  const { container } = await database.containers.createIfNotExists(
    { id: "c", partitionKey: { paths: ["/pk"] } },
    { offerThroughput: 400 },
  );
  await container.items.create({ id: "1", pk: "a" });
  const { resource: offer } = await container.readOffer();
  assert.equal(offer.content.offerThroughput, 400);
  const { resources: all } = await client.offers.readAll().fetchAll();
  assert.ok(all.some((o) => o.id === offer.id));
  offer.content.offerThroughput = 20000;
  const { resource: replaced } = await client.offer(offer.id).replace(offer);
  assert.equal(replaced.content.offerThroughput, 20000);
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 2);
  const { resource } = await container.item("1", "a").read();
  assert.equal(resource.pk, "a");
});

test("bad input gets clear errors", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "bad" });
  const { container } = await database.containers.createIfNotExists({
    id: "c",
    partitionKey: { paths: ["/pk"] },
  });
  await assert.rejects(container.items.create({ id: "x".repeat(1024), pk: "x" }), (e) => e.code === 400 && /limit is 1023 bytes/.test(e.message));
  await assert.rejects(
    container.item("k", "x").replace({ id: "other", pk: "x" }),
    (e) => e.code === 400 && /does not match the id in the request path/.test(e.message),
  );
  // The service's words for a request over its size limit, which clients
  // match on: {"code":"RequestEntityTooLarge","message":"Message:
  // {\"Errors\":[\"Request size is too large\"]}..."} (Azure/azure-cosmosdb-node
  // issue 65; the same text in Azure/azure-cosmos-dotnet-v3 pull request 1087's
  // diagnostics), then the limit that was passed.
  await assert.rejects(
    container.items.create({ id: "big", pk: "x", s: "y".repeat(2 * 1024 * 1024) }),
    (e) => e.code === 413 && /Request size is too large \(the request body (is \d+ bytes; the limit is|exceeds the limit of) 2097152 bytes\)/.test(e.message),
  );
  const missing = await client.database("nope").container("c").item("a", "x").read();
  assert.equal(missing.statusCode, 404);
});
