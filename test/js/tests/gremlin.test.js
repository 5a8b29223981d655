// The Gremlin API through npm gremlin 3.7.4: string scripts with bindings
// through Client.submit with GraphSON 2.0 and SASL PLAIN, the Azure Cosmos
// DB quickstart's way (azure-databases-docs gremlin/quickstart-nodejs.md),
// and the fluent API (bytecode) with GraphBinary and with the driver's
// default, GraphSON 3.0. The graph container is created through the NoSQL
// API with the @azure/cosmos SDK, as on Cosmos DB.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import gremlin from "gremlin";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

const { Client, DriverRemoteConnection } = gremlin.driver;
const { PlainTextSaslAuthenticator } = gremlin.driver.auth;
const { traversal } = gremlin.process.AnonymousTraversalSource;
const { P } = gremlin.process;

const user = "/dbs/graphdb/colls/modern";
const graphson2 = "application/vnd.gremlin-v2.0+json";
const graphbinary = "application/vnd.graphbinary-v1.0";

const readOnlyKey = Buffer.from("the read-only key of the gremlin js tests").toString("base64");

let server, client;

function attr(rs, key) {
  const a = rs.attributes;
  return a instanceof Map ? a.get(key) : a?.[key];
}

before(async () => {
  server = await startServer(["--gremlin-listen", "127.0.0.1:0", "--read-only-key", readOnlyKey]);
  assert.ok(server.gremlinURL, "the server printed no Gremlin API address");
  const cosmos = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  const { database } = await cosmos.databases.createIfNotExists({ id: "graphdb" });
  await database.containers.createIfNotExists({ id: "modern", partitionKey: { paths: ["/name"] }, throughput: 400 });
  cosmos.dispose?.();
  client = new Client(server.gremlinURL, {
    authenticator: new PlainTextSaslAuthenticator(user, emulatorKey),
    traversalsource: "g",
    mimeType: graphson2,
  });
  await client.open();
  // TinkerPop's modern graph, each vertex in its name's logical partition.
  const vertices = [
    ["1", "person", "marko", "age", 29],
    ["2", "person", "vadas", "age", 27],
    ["3", "software", "lop", "lang", "java"],
    ["4", "person", "josh", "age", 32],
    ["5", "software", "ripple", "lang", "java"],
    ["6", "person", "peter", "age", 35],
  ];
  for (const [id, label, name, key, value] of vertices) {
    await client.submit("g.addV(vlabel).property('id', vid).property('name', vname).property(pkey, pvalue)", {
      vlabel: label,
      vid: id,
      vname: name,
      pkey: key,
      pvalue: value,
    });
  }
  const edges = [
    ["marko", "1", "knows", "vadas", "2", 0.5],
    ["marko", "1", "knows", "josh", "4", 1.0],
    ["marko", "1", "created", "lop", "3", 0.4],
    ["josh", "4", "created", "ripple", "5", 1.0],
    ["josh", "4", "created", "lop", "3", 0.4],
    ["peter", "6", "created", "lop", "3", 0.2],
  ];
  for (const [spk, src, label, dpk, dst, weight] of edges) {
    await client.submit("g.V([spk, src]).addE(elabel).to(g.V([dpk, dst])).property('weight', w)", {
      spk,
      src,
      elabel: label,
      dpk,
      dst,
      w: weight,
    });
  }
});

after(async () => {
  await client?.close();
  await server?.stop();
});

test("scripts with GraphSON 2.0: Cosmos's untyped answers and status attributes", async () => {
  const count = await client.submit("g.V().count()");
  assert.deepEqual(count.toArray(), [6]);
  assert.ok(attr(count, "x-ms-total-request-charge") > 0, JSON.stringify(count.attributes));
  assert.equal(attr(count, "x-ms-status-code"), 200);
  assert.match(String(attr(count, "x-ms-activity-id")), /^[0-9a-f-]{36}$/);

  const friends = await client.submit("g.V([pk, vid]).out('knows').values('name')", { pk: "marko", vid: "1" });
  assert.deepEqual(friends.toArray().sort(), ["josh", "vadas"]);
  const creators = await client.submit("g.V(['lop','3']).in('created').values('name')");
  assert.deepEqual(creators.toArray().sort(), ["josh", "marko", "peter"]);
  const older = await client.submit("g.V().has('person', 'age', gt(30)).order().by('age', desc).values('name')");
  assert.deepEqual(older.toArray(), ["peter", "josh"]);

  // A vertex as Cosmos writes it: untyped, every property a list of
  // {id, value} (azure-databases-docs gremlin/support.md).
  const marko = (await client.submit("g.V(['marko','1'])")).first();
  assert.equal(marko.id, "1");
  assert.equal(marko.label, "person");
  assert.equal(marko.type, "vertex");
  assert.equal(marko.properties.age[0].value, 29);
  assert.equal(typeof marko.properties.age[0].id, "string");

  const edge = (await client.submit("g.V(['marko','1']).outE('knows').has('weight', 1.0)")).first();
  assert.equal(edge.type, "edge");
  assert.equal(edge.inV, "4");
  assert.equal(edge.outV, "1");

  const none = await client.submit("g.V().has('name', 'nobody')");
  assert.equal(none.length, 0);
});

test("errors: a syntax error is 597, a wrong key 401", async () => {
  await assert.rejects(client.submit("g.V().out("), (err) => err.statusCode === 597 && /syntax/.test(err.message));
  const wrong = new Client(server.gremlinURL, {
    authenticator: new PlainTextSaslAuthenticator(user, Buffer.from("not the key of this account, no").toString("base64")),
    traversalsource: "g",
    mimeType: graphson2,
  });
  try {
    await assert.rejects(wrong.submit("g.V().count()"), (err) => err.statusCode === 401);
  } finally {
    await wrong.close();
  }
});

test("the read-only key reads and cannot write", async () => {
  const ro = new Client(server.gremlinURL, {
    authenticator: new PlainTextSaslAuthenticator(user, readOnlyKey),
    traversalsource: "g",
    mimeType: graphson2,
  });
  try {
    assert.deepEqual((await ro.submit("g.V().hasLabel('software').count()")).toArray(), [2]);
    await assert.rejects(
      ro.submit("g.addV('person').property('id', '99').property('name', 'eve')"),
      (err) => err.statusCode === 401 && attr({ attributes: err.statusAttributes }, "x-ms-status-code") === 403 && /read-only/.test(err.message),
    );
  } finally {
    await ro.close();
  }
  assert.deepEqual((await client.submit("g.V().has('name', 'eve').count()")).toArray(), [0]);
});

for (const [name, mimeType] of [
  ["GraphBinary", graphbinary],
  ["GraphSON 3.0 (the driver's default)", undefined],
]) {
  test(`the fluent API (bytecode) with ${name}`, async () => {
    const conn = new DriverRemoteConnection(server.gremlinURL, {
      authenticator: new PlainTextSaslAuthenticator(user, emulatorKey),
      traversalsource: "g",
      ...(mimeType ? { mimeType } : {}),
    });
    try {
      const g = traversal().withRemote(conn);
      assert.deepEqual((await g.V().hasLabel("software").values("name").toList()).sort(), ["lop", "ripple"]);
      assert.deepEqual((await g.V().has("person", "age", P.lt(30)).values("name").toList()).sort(), ["marko", "vadas"]);
      const n = await g.V().out("created").count().next();
      assert.equal(Number(n.value), 4);
      const v = await g.V(["josh", "4"]).next();
      assert.equal(v.value.id, "4");
      assert.equal(v.value.label, "person");
    } finally {
      await conn.close();
    }
  });
}
