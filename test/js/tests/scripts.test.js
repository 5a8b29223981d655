// Server-side JavaScript through the JavaScript SDK: stored procedures,
// triggers and user-defined functions (container.scripts).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

let server;
let client;
let container;

before(async () => {
  // A short script time limit keeps the runaway test fast; 4-partition
  // throughput makes the UDF query cross partitions.
  server = await startServer(["--script-timeout", "1s", "--script-max-writes", "120", "--no-throttle"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  const { database } = await client.databases.createIfNotExists({ id: "scripts" });
  ({ container } = await database.containers.createIfNotExists({
    id: "c",
    partitionKey: { paths: ["/pk"] },
    throughput: 40000,
  }));
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

async function count(pk) {
  const { resources } = await container.items
    .query({ query: "SELECT VALUE COUNT(1) FROM c WHERE c.pk = @pk", parameters: [{ name: "@pk", value: pk }] })
    .fetchAll();
  return resources[0];
}

// bulkCreate creates docs {id: prefix+i, pk} for i in [from, n) and throws
// after `throwAt` creates when it is set. It returns how many it created,
// so the caller can continue where a run that was not accepted stopped.
function bulkCreate(pk, prefix, from, n, throwAt) {
  const coll = getContext().getCollection();
  let created = from;
  function next() {
    if (created === throwAt) throw new Error("stopping after " + throwAt);
    if (created >= n) {
      getContext().getResponse().setBody({ created: created, done: true });
      return;
    }
    const ok = coll.createDocument(coll.getSelfLink(), { id: prefix + created, pk: pk, n: created }, function (err) {
      if (err) throw err;
      created++;
      next();
    });
    if (!ok) getContext().getResponse().setBody({ created: created, done: false });
  }
  next();
}

test("script resources: create, read, replace, list, query and delete", async () => {
  const sprocs = container.scripts.storedProcedures;
  const { resource: sp, statusCode } = await sprocs.create({ id: "hello", body: "function () { getContext().getResponse().setBody('hi'); }" });
  assert.equal(statusCode, 201);
  assert.equal(sp.id, "hello");
  assert.match(sp._etag, /^".*"$/);
  await assert.rejects(sprocs.create({ id: "hello", body: "function () {}" }), (e) => e.code === 409);
  const { resource: read } = await container.scripts.storedProcedure("hello").read();
  assert.equal(read.body, sp.body);
  const { resource: replaced } = await container.scripts
    .storedProcedure("hello")
    .replace({ id: "hello", body: "function (name) { getContext().getResponse().setBody('hi ' + name); }" });
  assert.notEqual(replaced._etag, sp._etag);
  const { resource: out } = await container.scripts.storedProcedure("hello").execute("p", ["ann"]);
  assert.equal(out, "hi ann");
  await sprocs.create({ id: "logs", body: "function (x) { console.log('got', x); }" });
  const logged = await container.scripts.storedProcedure("logs").execute("p", [7], { enableScriptLogging: true });
  assert.equal(decodeURIComponent(logged.headers["x-ms-documentdb-script-log-results"]), "got 7\n");

  await container.scripts.triggers.create({ id: "t1", body: "function () {}", triggerType: "Pre", triggerOperation: "Create" });
  await assert.rejects(
    container.scripts.triggers.create({ id: "t2", body: "function () {}", triggerType: "Sideways", triggerOperation: "Create" }),
    (e) => e.code === 400 && /triggerType/.test(e.message),
  );
  await container.scripts.userDefinedFunctions.create({ id: "u1", body: "function (x) { return x; }" });

  const { resources: all } = await sprocs.readAll().fetchAll();
  assert.deepEqual(all.map((s) => s.id).filter((id) => id === "hello"), ["hello"]);
  const { resources: trig } = await container.scripts.triggers.readAll().fetchAll();
  assert.equal(trig.find((t) => t.id === "t1").triggerType, "Pre");
  const { resources: q } = await sprocs
    .query({ query: "SELECT * FROM s WHERE s.id = @id", parameters: [{ name: "@id", value: "hello" }] })
    .fetchAll();
  assert.deepEqual(q.map((s) => s.id), ["hello"]);

  await container.scripts.storedProcedure("hello").delete();
  await assert.rejects(container.scripts.storedProcedure("hello").read(), (e) => e.code === 404);
  await assert.rejects(container.scripts.storedProcedure("hello").execute("p", []), (e) => e.code === 404);
  await container.scripts.trigger("t1").delete();
  await container.scripts.userDefinedFunction("u1").delete();
});

test("a stored procedure that creates 100 documents commits all of them; one that throws after 50 leaves none", async () => {
  await container.scripts.storedProcedures.create({ id: "bulk", body: bulkCreate.toString() });
  const sp = container.scripts.storedProcedure("bulk");
  const { resource } = await sp.execute("bulk-a", ["bulk-a", "d", 0, 100]);
  assert.deepEqual(resource, { created: 100, done: true });
  assert.equal(await count("bulk-a"), 100);

  await assert.rejects(sp.execute("bulk-b", ["bulk-b", "d", 0, 100, 50]), (e) => e.code === 400 && /stopping after 50/.test(e.message));
  assert.equal(await count("bulk-b"), 0);
});

test("a procedure past its write budget returns a continuation and a second call finishes", async () => {
  // The server accepts 120 writes per run; 200 documents take two runs.
  const sp = container.scripts.storedProcedure("bulk");
  const first = await sp.execute("bulk-c", ["bulk-c", "d", 0, 200]);
  assert.equal(first.resource.done, false);
  assert.equal(first.resource.created, 120);
  assert.equal(await count("bulk-c"), 120);
  const second = await sp.execute("bulk-c", ["bulk-c", "d", first.resource.created, 200]);
  assert.deepEqual(second.resource, { created: 200, done: true });
  assert.equal(await count("bulk-c"), 200);
});

test("an infinite loop is interrupted at the time limit while the partition keeps serving", async () => {
  await container.scripts.storedProcedures.create({ id: "spin", body: "function () { while (true) {} }" });
  const started = Date.now();
  const spinning = container.scripts.storedProcedure("spin").execute("hot", []);
  // The same logical partition takes writes and reads while it spins.
  const t0 = Date.now();
  await container.items.create({ id: "during", pk: "hot" });
  const { resource } = await container.item("during", "hot").read();
  assert.equal(resource.id, "during");
  assert.ok(Date.now() - t0 < 900, "writes waited for the script");
  await assert.rejects(spinning, (e) => e.code === 408);
  const took = Date.now() - started;
  assert.ok(took >= 900 && took < 5000, `the script was stopped after ${took} ms`);
});

test("the server-side API: reads, queries, replace, delete, errors to callbacks", async () => {
  const body = function (pk) {
    const coll = getContext().getCollection();
    const res = getContext().getResponse();
    const link = coll.getSelfLink();
    coll.createDocument(link, { id: "a", pk: pk, n: 1 });
    coll.createDocument(link, { id: "b", pk: pk, n: 2 }, {}, function (err, doc) {
      if (err) throw err;
      coll.createDocument(link, { id: "a", pk: pk }, function (err2) {
        // A conflict passed to a callback does not abort the script.
        const conflict = err2.number;
        coll.queryDocuments(link, { query: "SELECT VALUE SUM(c.n) FROM c WHERE c.n > @min", parameters: [{ name: "@min", value: 0 }] }, {}, function (err3, sums) {
          if (err3) throw err3;
          coll.replaceDocument(doc._self, { id: "b", pk: pk, n: 20 }, function (err4, replaced) {
            if (err4) throw err4;
            coll.readDocument(link + "docs/a", function (err5, a) {
              if (err5) throw err5;
              coll.deleteDocument(a._self, function (err6) {
                if (err6) throw err6;
                coll.readDocuments(link, {}, function (err7, docs) {
                  if (err7) throw err7;
                  res.setBody({ conflict: conflict, sum: sums[0], left: docs.map((d) => d.id + ":" + d.n), replacedEtag: replaced._etag !== doc._etag });
                });
              });
            });
          });
        });
      });
    });
  };
  await container.scripts.storedProcedures.create({ id: "api", body: body.toString() });
  const { resource } = await container.scripts.storedProcedure("api").execute("api", ["api"]);
  assert.deepEqual(resource, { conflict: 409, sum: 3, left: ["b:20"], replacedEtag: true });
  const { resources } = await container.items.query("SELECT c.id, c.n FROM c WHERE c.pk = 'api'").fetchAll();
  assert.deepEqual(resources, [{ id: "b", n: 20 }]);
  // A write to another logical partition is refused.
  await container.scripts.storedProcedures.create({
    id: "elsewhere",
    body: "function () { var c = getContext().getCollection(); c.createDocument(c.getSelfLink(), {id: 'x', pk: 'other'}); }",
  });
  await assert.rejects(container.scripts.storedProcedure("elsewhere").execute("mine", []), (e) => e.code === 400);
  assert.equal(await count("other"), 0);
});

test("a pre-trigger adds a field and a post-trigger writes an audit document; a throwing post-trigger rolls back", async () => {
  const triggers = container.scripts.triggers;
  await triggers.create({
    id: "stamp",
    triggerType: "Pre",
    triggerOperation: "Create",
    body: function () {
      const req = getContext().getRequest();
      const doc = req.getBody();
      doc.stamped = "yes";
      req.setBody(doc);
    }.toString(),
  });
  await triggers.create({
    id: "audit",
    triggerType: "Post",
    triggerOperation: "All",
    body: function () {
      const coll = getContext().getCollection();
      const doc = getContext().getResponse().getBody();
      const ok = coll.createDocument(coll.getSelfLink(), { id: "audit-" + doc.id, pk: doc.pk, of: doc.id, stamped: doc.stamped }, function (err) {
        if (err) throw err;
      });
      if (!ok) throw new Error("audit not accepted");
    }.toString(),
  });
  await triggers.create({
    id: "refuse",
    triggerType: "Post",
    triggerOperation: "All",
    body: "function () { throw new Error('refused by trigger'); }",
  });

  const { resource } = await container.items.create({ id: "t1", pk: "trig" }, { preTriggerInclude: ["stamp"], postTriggerInclude: ["audit"] });
  assert.equal(resource.stamped, "yes");
  const { resource: audit } = await container.item("audit-t1", "trig").read();
  assert.deepEqual([audit.of, audit.stamped], ["t1", "yes"]);

  await assert.rejects(
    container.items.create({ id: "t2", pk: "trig" }, { preTriggerInclude: ["stamp"], postTriggerInclude: ["audit", "refuse"] }),
    (e) => e.code === 400 && /refused by trigger/.test(e.message),
  );
  // A missing item reads as status 404 (the SDK does not throw).
  assert.equal((await container.item("t2", "trig").read()).statusCode, 404);
  assert.equal((await container.item("audit-t2", "trig").read()).statusCode, 404);
  // A pre-trigger named as a post-trigger is refused.
  await assert.rejects(container.items.create({ id: "t3", pk: "trig" }, { postTriggerInclude: ["stamp"] }), (e) => e.code === 400);
});

test("a UDF in a cross-partition query with ORDER BY", async () => {
  await container.scripts.userDefinedFunctions.create({ id: "tax", body: "function (price) { return price * 1.25; }" });
  const ops = [];
  for (let i = 0; i < 40; i++) ops.push(container.items.create({ id: "p" + i, pk: "shop" + (i % 8), price: (i * 7) % 40, kind: "product" }));
  await Promise.all(ops);
  const { resources } = await container.items
    .query("SELECT c.id, udf.tax(c.price) AS gross FROM c WHERE c.kind = 'product' ORDER BY c.price DESC")
    .fetchAll();
  assert.equal(resources.length, 40);
  const want = Array.from({ length: 40 }, (_, i) => ({ id: "p" + i, price: (i * 7) % 40 }))
    .sort((a, b) => b.price - a.price)
    .map((p) => p.price * 1.25);
  assert.deepEqual(resources.map((r) => r.gross), want);
  // A UDF that throws fails the query with 400.
  await container.scripts.userDefinedFunctions.create({ id: "boom", body: "function () { throw new Error('boom'); }" });
  await assert.rejects(container.items.query("SELECT VALUE udf.boom() FROM c").fetchAll(), (e) => e.code === 400 && /boom/.test(e.message));
});
