// Users, permissions and resource tokens through the JS SDK: a client that
// holds only a permission's token may do exactly what the permission grants.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

let server;
let admin;
let database;
let orders;
const link = "dbs/perm/colls/orders";

before(async () => {
  server = await startServer();
  admin = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  ({ database } = await admin.databases.createIfNotExists({ id: "perm" }));
  ({ container: orders } = await database.containers.createIfNotExists({
    id: "orders",
    partitionKey: { paths: ["/customer"] },
  }));
  await database.containers.createIfNotExists({ id: "other", partitionKey: { paths: ["/customer"] } });
  await orders.items.create({ id: "b1", customer: "bob", total: 7 });
  await database.users.create({ id: "alice" });
});

after(async () => {
  admin?.dispose?.();
  await server?.stop();
});

// permit creates a permission of user alice and returns it with its token.
async function permit(id, def, options) {
  const { resource } = await database.user("alice").permissions.create({ id, ...def }, options);
  assert.match(resource._token, /^type=resource&ver=1\.0&sig=/);
  return resource;
}

function tokenClient(token) {
  return new CosmosClient({ endpoint: server.endpoint, tokenProvider: async () => token });
}

const code = (c, pattern) => (e) => {
  assert.equal(e.code, c, `status ${e.code}: ${e.message}`);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

test("users and permissions: create, read, list, query, replace, delete", async () => {
  const { resource: user } = await database.user("alice").read();
  assert.equal(user.id, "alice");
  assert.equal(user._permissions, "permissions/");
  assert.ok(user._rid && user._self && user._etag && user._ts);
  await database.users.create({ id: "temp" });
  const { resources: users } = await database.users.readAll().fetchAll();
  assert.deepEqual(users.map((u) => u.id).sort(), ["alice", "temp"]);
  const { resources: found } = await database.users
    .query({ query: "SELECT * FROM root r WHERE r.id = @id", parameters: [{ name: "@id", value: "temp" }] })
    .fetchAll();
  assert.deepEqual(found.map((u) => u.id), ["temp"]);

  const p = await database.user("temp").permissions.create({ id: "p", permissionMode: "Read", resource: link });
  assert.equal(p.resource.permissionMode, "Read");
  assert.equal(p.resource.resource, link);
  const { resource: replaced } = await database
    .user("temp")
    .permission("p")
    .replace({ id: "p", permissionMode: "All", resource: link, resourcePartitionKey: ["bob"] });
  assert.equal(replaced.permissionMode, "All");
  assert.deepEqual(replaced.resourcePartitionKey, ["bob"]);
  const { resources: perms } = await database.user("temp").permissions.readAll().fetchAll();
  assert.equal(perms.length, 1);
  assert.ok(perms[0]._token);
  await assert.rejects(
    database.user("temp").permissions.create({ id: "bad", permissionMode: "Write", resource: link }),
    code(400, /permissionMode/),
  );
  await assert.rejects(
    database.user("temp").permissions.create({ id: "bad", permissionMode: "Read", resource: link }, { resourceTokenExpirySeconds: 18001 }),
    code(400, /expiry-seconds/),
  );
  await database.user("temp").delete();
  await assert.rejects(database.user("temp").read(), code(404));
});

test("a partition-key token reads and writes its key and nothing else", async () => {
  const perm = await permit("alice-orders", { permissionMode: "All", resource: link, resourcePartitionKey: ["alice"] });
  // resourceTokens maps a container link to its token, as the SDK documents.
  const client = new CosmosClient({ endpoint: server.endpoint, resourceTokens: { [link]: perm._token } });
  const c = client.database("perm").container("orders");

  const created = await c.items.create({ id: "a1", customer: "alice", total: 3 });
  assert.equal(created.statusCode, 201);
  await c.items.upsert({ id: "a2", customer: "alice", total: 4 });
  const { resource: read } = await c.item("a1", "alice").read();
  assert.equal(read.total, 3);
  await c.item("a1", "alice").replace({ id: "a1", customer: "alice", total: 5 });
  await c.item("a2", "alice").patch([{ op: "incr", path: "/total", value: 1 }]);
  const { resources: mine } = await c.items
    .query("SELECT VALUE c.total FROM c ORDER BY c.id", { partitionKey: "alice" })
    .fetchAll();
  assert.deepEqual(mine, [5, 5]);
  // A query that names no key sees only the granted one.
  const { resources: all } = await c.items.query("SELECT VALUE c.id FROM c").fetchAll();
  assert.deepEqual(all.sort(), ["a1", "a2"]);
  const { resources: count } = await c.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
  assert.deepEqual(count, [2]);
  // A read feed too: the SDK's readAll sees only the granted key.
  const { resources: feed } = await c.items.readAll().fetchAll();
  assert.deepEqual(feed.map((d) => d.id).sort(), ["a1", "a2"]);
  await c.item("a2", "alice").delete();

  // Another key: 403, naming what the token covers.
  await assert.rejects(c.item("b1", "bob").read(), code(403, /covers only partition key \["alice"\]/));
  await assert.rejects(c.items.create({ id: "x", customer: "bob" }), code(403, /does not cover partition key \["bob"\]/));
  await assert.rejects(c.items.query("SELECT * FROM c", { partitionKey: "bob" }).fetchAll(), code(403));
  client.dispose?.();

  // The same token, sent for anything else.
  const any = tokenClient(perm._token);
  await any.database("perm").container("orders").item("a1", "alice").read();
  await assert.rejects(any.database("perm").container("other").item("a1", "alice").read(), code(403, /does not cover GET \/dbs\/perm\/colls\/other/));
  await assert.rejects(any.database("perm").container("other").items.create({ id: "z", customer: "alice" }), code(403));
  await assert.rejects(any.database("perm").read(), code(403, /does not cover GET \/dbs\/perm/));
  await assert.rejects(any.databases.readAll().fetchAll(), code(403));
  await assert.rejects(any.databases.create({ id: "mine" }), code(403));
  await assert.rejects(any.database("perm").containers.create({ id: "mine" }), code(403));
  await assert.rejects(any.database("perm").container("orders").delete(), code(403, /cannot delete container/));
  await assert.rejects(any.database("perm").users.readAll().fetchAll(), code(403));
  await assert.rejects(any.offers.readAll().fetchAll(), code(403));
  any.dispose?.();
});

test("a read token reads but cannot write", async () => {
  const perm = await permit("alice-read", { permissionMode: "Read", resource: link });
  const client = new CosmosClient({ endpoint: server.endpoint, permissionFeed: [perm] });
  const c = client.database("perm").container("orders");
  const { resource } = await c.item("b1", "bob").read();
  assert.equal(resource.total, 7);
  const { resources } = await c.items.readAll().fetchAll();
  assert.ok(resources.some((d) => d.id === "b1"));
  await assert.rejects(c.items.create({ id: "r1", customer: "bob" }), code(403, /read-only/));
  await assert.rejects(c.item("b1", "bob").delete(), code(403, /read-only/));
  await assert.rejects(c.item("b1", "bob").replace({ id: "b1", customer: "bob", total: 0 }), code(403, /read-only/));
  client.dispose?.();
});

test("an expired token is refused", async () => {
  // Valid for at least one more second: minted for 2 s within the current second.
  const perm = await permit("short", { permissionMode: "All", resource: link }, { resourceTokenExpirySeconds: 2 });
  const client = tokenClient(perm._token);
  const c = client.database("perm").container("orders");
  await c.item("b1", "bob").read();
  await new Promise((r) => setTimeout(r, 2100));
  await assert.rejects(c.item("b1", "bob").read(), code(401, /expired/));
  // Reading the permission again gives a new token.
  const { resource: again } = await database.user("alice").permission("short").read();
  const fresh = tokenClient(again._token);
  await fresh.database("perm").container("orders").item("b1", "bob").read();
  client.dispose?.();
  fresh.dispose?.();
});

test("deleting the permission or the user revokes the token", async () => {
  await database.users.create({ id: "carol" });
  const { resource: p1 } = await database.user("carol").permissions.create({ id: "c1", permissionMode: "All", resource: link });
  const { resource: p2 } = await database.user("carol").permissions.create({ id: "c2", permissionMode: "Read", resource: link });
  const c1 = tokenClient(p1._token).database("perm").container("orders");
  const c2 = tokenClient(p2._token).database("perm").container("orders");
  await c1.item("b1", "bob").read();
  await c2.item("b1", "bob").read();
  await database.user("carol").permission("c1").delete();
  await assert.rejects(c1.item("b1", "bob").read(), code(401, /no longer exists/));
  await c2.item("b1", "bob").read();
  await database.user("carol").delete();
  await assert.rejects(c2.item("b1", "bob").read(), code(401, /no longer exists/));
});
