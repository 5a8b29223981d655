// What applications written against the service send and expect, through
// the JavaScript SDK: the legacy indexing-policy form, enumerations in the
// SDK's lower case.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { ChangeFeedStartFrom, CosmosClient, PermissionMode, TriggerType, TriggerOperation } from "@azure/cosmos";
import { startServer, emulatorKey, rawRequest } from "./server.js";

let server;
let client;
let database;

before(async () => {
  server = await startServer();
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  ({ database } = await client.databases.createIfNotExists({ id: "compat" }));
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

test("a legacy indexing policy is accepted and returned normalised", async () => {
  // The pre-2018 form, as the SDK's IndexingPolicy type still declares it
  // (IndexedPath.indexes with kind, dataType and precision: see
  // sdk/cosmosdb/cosmos/src/documents/IndexingPolicy.ts). The service
  // range-indexes every scalar path whatever the kind, and returns the
  // policy with the root path "/*" and /"_etag"/? excluded
  // (https://learn.microsoft.com/azure/cosmos-db/index-policy).
  const legacy = {
    indexingMode: "Consistent",
    automatic: true,
    includedPaths: [
      {
        path: "/",
        indexes: [
          { kind: "Hash", dataType: "String", precision: 3 },
          { kind: "Range", dataType: "Number", precision: -1 },
        ],
      },
    ],
    excludedPaths: [],
  };
  const { resource: def } = await database.containers.create({ id: "legacy", partitionKey: { paths: ["/pk"] }, indexingPolicy: legacy });
  assert.equal(def.indexingPolicy.indexingMode, "consistent");
  assert.deepEqual(def.indexingPolicy.includedPaths, [{ path: "/*" }]);
  assert.deepEqual(def.indexingPolicy.excludedPaths, [{ path: '/"_etag"/?' }]);

  // The 2017 samples' /* form with Range and Spatial indexes.
  const { resource: star } = await database.containers.create({
    id: "legacy-star",
    partitionKey: { paths: ["/pk"] },
    indexingPolicy: {
      includedPaths: [{ path: "/*", indexes: [{ kind: "Range", dataType: "String", precision: -1 }, { kind: "Spatial", dataType: "Point" }] }],
    },
  });
  assert.deepEqual(star.indexingPolicy.includedPaths, [{ path: "/*" }]);
  assert.equal(star.indexingPolicy.automatic, true);

  // The modern form gains the _etag exclusion too.
  const { resource: modern } = await database.containers.create({
    id: "modern",
    partitionKey: { paths: ["/pk"] },
    indexingPolicy: { indexingMode: "consistent", includedPaths: [{ path: "/a/?" }], excludedPaths: [{ path: "/*" }] },
  });
  assert.deepEqual(modern.indexingPolicy.excludedPaths, [{ path: "/*" }, { path: '/"_etag"/?' }]);

  // The container works: items are written and queried by an indexed path.
  const c = database.container("legacy");
  await c.items.create({ id: "1", pk: "p", n: 5 });
  const { resources } = await c.items.query("SELECT VALUE c.id FROM c WHERE c.n > 1").fetchAll();
  assert.deepEqual(resources, ["1"]);

  // An index kind the service never had is still refused.
  await assert.rejects(
    database.containers.create({ id: "bad", partitionKey: { paths: ["/pk"] }, indexingPolicy: { includedPaths: [{ path: "/*", indexes: [{ kind: "Btree" }] }] } }),
    (e) => e.code === 400 && /Btree/.test(e.message),
  );
});

test("enumerations in the SDK's lower case", async () => {
  // The SDK's enums are lower case (PermissionMode.Read = "read",
  // TriggerType.Pre = "pre", TriggerOperation.All = "all":
  // sdk/cosmosdb/cosmos/src/documents/PermissionMode.ts, TriggerType.ts,
  // TriggerOperation.ts), and the service accepts them.
  assert.equal(PermissionMode.Read, "read");
  const { container } = await database.containers.createIfNotExists({ id: "enums", partitionKey: { paths: ["/pk"] } });
  await container.scripts.triggers.create({
    id: "stamp",
    triggerType: TriggerType.Pre,
    triggerOperation: TriggerOperation.All,
    body: "function () { var r = getContext().getRequest(); var d = r.getBody(); d.stamped = true; r.setBody(d); }",
  });
  const { resource } = await container.items.create({ id: "t", pk: "p" }, { preTriggerInclude: ["stamp"] });
  assert.equal(resource.stamped, true);

  await database.users.create({ id: "reader" });
  const { resource: perm } = await database.user("reader").permissions.create({ id: "p", permissionMode: PermissionMode.Read, resource: container.url });
  assert.match(perm._token, /^type=resource/);
  const { resource: all } = await database.user("reader").permissions.create({ id: "q", permissionMode: PermissionMode.All, resource: container.url });
  assert.equal(all.permissionMode.toLowerCase(), "all");
  // A token of the "read" permission reads and may not write.
  const reader = new CosmosClient({ endpoint: server.endpoint, tokenProvider: async () => perm._token });
  try {
    const c = reader.database("compat").container("enums");
    assert.equal((await c.item("t", "p").read()).resource.id, "t");
    await assert.rejects(c.items.create({ id: "u", pk: "p" }), (e) => e.code === 403);
  } finally {
    reader.dispose?.();
  }
});

test("item ids with '?' and control characters", async () => {
  // The service creates an item whose id holds '?' (201) and reads (200),
  // replaces (200) and deletes (204) it, through the gateway and in direct
  // mode, though the documentation of Resource.Id lists '?' among the
  // restricted characters (IdWithDisallowedCharQuestionMark in the .NET
  // SDK's Microsoft.Azure.Cosmos.EmulatorTests/CosmosItemIdEncodingTestsBase.cs;
  // idWithDisallowedCharQuestionMark in the Java SDK's CosmosItemIdEncodingTest.java).
  // This SDK puts the id into the URL without escaping '?' and signs the
  // whole link (createDocumentUri in sdk/cosmosdb/cosmos/src/common/uriFactory.ts).
  // Control characters are accepted in ids by the service
  // (https://learn.microsoft.com/rest/api/cosmos-db/documents).
  const { container } = await database.containers.createIfNotExists({ id: "ids", partitionKey: { paths: ["/pk"] } });
  for (const id of ["what?x", "a b?c=d&e", "Disallowed?Chars", "tab\there", "line\r\nbreak"]) {
    const created = await container.items.create({ id, pk: "p" });
    assert.equal(created.statusCode, 201, JSON.stringify(id));
    const read = await container.item(id, "p").read();
    assert.equal(read.statusCode, 200, JSON.stringify(id));
    assert.equal(read.resource.id, id);
    const replaced = await container.item(id, "p").replace({ id, pk: "p", v: 2 });
    assert.equal(replaced.resource.v, 2);
    assert.equal((await container.item(id, "p").delete()).statusCode, 204);
  }
});

test("a bulk request's invalid operation fails alone", async () => {
  // Each operation of a bulk request has its own status; with
  // continueOnError false the service stops at the failed one and answers
  // 424 for the rest (BulkOptions.continueOnError in
  // sdk/cosmosdb/cosmos/src/utils/batch.ts; the x-ms-cosmos-batch-continue-on-error
  // header: https://learn.microsoft.com/rest/api/cosmos-db/common-cosmosdb-rest-request-headers).
  const { container } = await database.containers.createIfNotExists({ id: "bulk", partitionKey: { paths: ["/pk"] } });
  const ops = (tag) => [
    { operationType: "Create", partitionKey: "p", resourceBody: { id: `${tag}1`, pk: "p" } },
    { operationType: "Patch", id: `${tag}1`, partitionKey: "p", resourceBody: { operations: [{ op: "bogus", path: "/n" }] } },
    { operationType: "Create", partitionKey: "p", resourceBody: { id: `${tag}3`, pk: "p" } },
  ];
  const go = await container.items.bulk(ops("go"), { continueOnError: true });
  assert.deepEqual(go.map((r) => r.statusCode), [201, 400, 201]);
  const stop = await container.items.bulk(ops("stop"), { continueOnError: false });
  assert.deepEqual(stop.map((r) => r.statusCode), [201, 400, 424]);
  assert.equal((await container.item("stop3", "p").read()).statusCode, 404);
  assert.equal((await container.item("go3", "p").read()).statusCode, 200);

  // The same for an operation that fails when it runs (a create of an
  // item that exists): the ones after it are not run.
  const conflict = await container.items.bulk(
    [
      { operationType: "Create", partitionKey: "p", resourceBody: { id: "go1", pk: "p" } },
      { operationType: "Create", partitionKey: "p", resourceBody: { id: "after", pk: "p" } },
    ],
    { continueOnError: false },
  );
  assert.deepEqual(conflict.map((r) => r.statusCode), [409, 424]);
  assert.equal((await container.item("after", "p").read()).statusCode, 404);
});

test("a read with If-None-Match of the current etag is 304", async () => {
  // The service answers 304 Not Modified to a resource read whose
  // If-None-Match is the resource's etag
  // (https://learn.microsoft.com/rest/api/cosmos-db/common-cosmosdb-rest-request-headers,
  // If-None-Match); the SDK sends it from RequestOptions.accessCondition.
  const { container } = await database.containers.createIfNotExists({ id: "etags", partitionKey: { paths: ["/pk"] } });
  await container.scripts.triggers.create({ id: "t", triggerType: "Pre", triggerOperation: "All", body: "function () {}" });
  await database.users.upsert({ id: "etag-user" });
  const reads = {
    database: (o) => database.read(o),
    trigger: (o) => container.scripts.trigger("t").read(o),
    user: (o) => database.user("etag-user").read(o),
  };
  for (const [what, read] of Object.entries(reads)) {
    const first = await read();
    assert.equal(first.statusCode, 200, what);
    const etag = first.resource._etag;
    const again = await read({ accessCondition: { type: "IfNoneMatch", condition: etag } });
    assert.equal(again.statusCode, 304, what);
    const other = await read({ accessCondition: { type: "IfNoneMatch", condition: '"other"' } });
    assert.equal(other.statusCode, 200, what);
  }
  // The SDK's client-side encryption reads its keys so, and takes 304 as
  // "unchanged" (fetchClientEncryptionKey in
  // sdk/cosmosdb/cosmos/src/encryption/EncryptionProcessor.ts); a
  // container read is signed and sent the same way.
  const cek = {
    id: "cek",
    encryptionAlgorithm: "AEAD_AES_256_CBC_HMAC_SHA256",
    wrappedDataEncryptionKey: Buffer.from("wrapped").toString("base64"),
    keyWrapMetadata: { type: "LOCAL", name: "kek", value: "local/kek", algorithm: "RSA-OAEP" },
  };
  assert.equal((await rawRequest(server.endpoint, "POST", "/dbs/compat/clientencryptionkeys", {}, emulatorKey, cek)).status, 201);
  for (const path of ["/dbs/compat/clientencryptionkeys/cek", "/dbs/compat/colls/etags"]) {
    const first = await rawRequest(server.endpoint, "GET", path);
    assert.equal(first.status, 200, path);
    const again = await rawRequest(server.endpoint, "GET", path, { "If-None-Match": first.body._etag });
    assert.equal(again.status, 304, path);
  }
});

test("offers queried as the older SDKs query them", async () => {
  // The .NET SDK v2 (DocumentClient.CreateOfferQuery with
  // "SELECT * FROM root r WHERE r.resource = @link") and v3 (CosmosOffers:
  // "select * from root r where r.offerResourceId= @offerResourceId") query
  // /offers with an alias and parameters; the service runs any query there.
  const { container } = await database.containers.createIfNotExists({ id: "offered", partitionKey: { paths: ["/pk"] } }, { offerThroughput: 500 });
  const { resource: def } = await container.read();
  const { resources: byLink } = await client.offers
    .query({ query: "SELECT * FROM root r WHERE r.resource = @link", parameters: [{ name: "@link", value: def._self }] })
    .fetchAll();
  assert.equal(byLink.length, 1);
  assert.equal(byLink[0].content.offerThroughput, 500);
  const { resources: byRid } = await client.offers
    .query({ query: "select * from root r where r.offerResourceId= @offerResourceId", parameters: [{ name: "@offerResourceId", value: def._rid }] })
    .fetchAll();
  assert.deepEqual(byRid.map((o) => o.id), [byLink[0].id]);
  await assert.rejects(client.offers.query("SELECT * FROM r WHERE").fetchAll(), (e) => e.code === 400);
});

test("details clients look at", async () => {
  const { container } = await database.containers.createIfNotExists({ id: "details", partitionKey: { paths: ["/pk"] } });
  await container.items.create({ id: "a", pk: "p", g: "x", n: 1 });
  await container.items.create({ id: "b", pk: "p", g: "y" });

  // Latest-version change feed items carry _lsn, as the service's do
  // (https://learn.microsoft.com/azure/cosmos-db/nosql/change-feed-modes#parse-the-response-object).
  const it = container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning() });
  const page = await it.readNext();
  assert.equal(page.result.length, 2);
  assert.ok(page.result.every((d) => Number.isInteger(d._lsn) && d._lsn > 0), JSON.stringify(page.result));

  // A continuation the service cannot use is refused in its words
  // (https://github.com/Azure/azure-cosmos-dotnet-v3/issues/3416 quotes
  // them): here a change feed continuation whose position was altered.
  const cont = JSON.parse(page.continuationToken);
  for (const c of cont.Continuation) c.continuationToken = '"not-a-position"';
  await assert.rejects(
    container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(JSON.stringify(cont)) }).readNext(),
    (e) => e.code === 400 && e.message.includes("The continuation token specified in the request is malformed. Re-run the query without it and iterate."),
  );

  // A transactional batch with an item of another partition key is
  // refused in the service's words (quoted in
  // https://github.com/Azure/azure-sdk-for-js/issues/17387).
  const batch = container.items.batch(
    [
      { operationType: "Create", resourceBody: { id: "b1", pk: "p" } },
      { operationType: "Create", resourceBody: { id: "b2", pk: "other" } },
    ],
    "p",
  );
  await assert.rejects(batch, (e) => e.message.includes("One or more operations within the batch request have a different partition key value than the request."));

  // A container read with quota info carries collectionSize, which the
  // SDK's readPartitionKeyRanges-free size checks read
  // (https://learn.microsoft.com/rest/api/cosmos-db/common-cosmosdb-rest-response-headers, x-ms-resource-quota).
  const read = await container.read({ populateQuotaInfo: true });
  assert.match(read.headers["x-ms-resource-quota"], /collectionSize=/);

  // The service refuses a partition key path with two names in one segment.
  await assert.rejects(
    database.containers.create({ id: "badpath", partitionKey: { paths: ["/id ds"] } }),
    (e) => e.code === 400 && e.message.includes("The partition key component definition path '/id ds' could not be accepted, failed near position '4'."),
  );

  // GROUP BY: a group whose aggregate is undefined has no such property
  // (https://learn.microsoft.com/azure/cosmos-db/nosql/query/group-by).
  const { resources: groups } = await container.items
    .query("SELECT c.g, MAX(c.n) AS m FROM c GROUP BY c.g", { partitionKey: "p" })
    .fetchAll();
  const byG = Object.fromEntries(groups.map((r) => [r.g, r]));
  assert.deepEqual(byG.x, { g: "x", m: 1 });
  assert.deepEqual(byG.y, { g: "y" });

  // A 404 on a point read carries the session token of the item's range.
  const missing = await container.item("nope", "p").read();
  assert.equal(missing.statusCode, 404);
  assert.match(missing.headers["x-ms-session-token"] ?? "", /^\d+:/);

  // The stored procedure API: getResponse().appendValue("Body", ...) and
  // console.log with %s (the server-side JavaScript API,
  // https://azure.github.io/azure-cosmosdb-js-server/).
  await container.scripts.storedProcedures.create({
    id: "say",
    body: 'function (who) { var r = getContext().getResponse(); r.setBody("hi "); r.appendValue("Body", who); console.log("said hi to %s, %s times", who, 1); }',
  });
  const ran = await container.scripts.storedProcedure("say").execute("p", ["ann"], { enableScriptLogging: true });
  assert.equal(ran.resource, "hi ann");
  assert.equal(decodeURIComponent(ran.headers["x-ms-documentdb-script-log-results"]).trimEnd(), "said hi to ann, 1 times");
});
