// The MongoDB API through the Node.js driver (the one mongosh is built on) and
// through mongosh itself: a scripted session on a sharded collection, the
// same data read back through the NoSQL API, and an interactive-style
// session through `mongosh --eval` whose output is checked.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { MongoClient, ObjectId, Long, Decimal128, Binary, Int32, Double } from "mongodb";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

const mongosh = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "mongosh");
const run = promisify(execFile);

let server, client, cosmos;

before(async () => {
  server = await startServer(["--mongo-listen", "127.0.0.1:0"]);
  assert.ok(server.mongoURL, "the server printed no MongoDB API address");
  client = new MongoClient(server.mongoURL, { serverSelectionTimeoutMS: 5000 });
  await client.connect();
  cosmos = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
});

after(async () => {
  await client?.close();
  cosmos?.dispose?.();
  await server?.stop();
});

const regions = ["eu", "us", "asia", "africa", "oceania"];

test("the Node.js driver: a sharded collection over 4 partitions, CRUD, cursors, aggregation", async () => {
  const db = client.db("shop");
  assert.equal((await db.command({ ping: 1 })).ok, 1);
  // Cosmos's extension command: a collection sharded on region, 24,000 RU/s.
  const created = await db.command({ customAction: "CreateCollection", collection: "orders", shardKey: "region", offerThroughput: 24000 });
  assert.equal(created.ok, 1);
  const info = await db.command({ customAction: "GetCollection", collection: "orders" });
  assert.equal(info.ok, 1);
  assert.deepEqual(Object.keys(info.shardKeyDefinition ?? {}), ["region"], JSON.stringify(info));

  const orders = db.collection("orders");
  const docs = [];
  for (let i = 0; i < 600; i++) {
    docs.push({ _id: i, region: regions[i % regions.length], qty: i % 7, price: 1.5 * (i % 11), tags: i % 3 === 0 ? ["gift"] : [] });
  }
  const ins = await orders.insertMany(docs, { ordered: true });
  assert.equal(ins.insertedCount, 600);

  // The container is a NoSQL container spread over 4 physical partitions,
  // whose partition key is the encoded shard key value each item carries
  // in its "~sk" member (a string stays itself).
  const container = cosmos.database("shop").container("orders");
  const { resource: def } = await container.read();
  assert.deepEqual(def.partitionKey.paths, ["/~sk"]);
  assert.equal(def.mongoShardKey, "region");
  const { resource: item } = await container.item("~n:7", regions[7 % regions.length]).read();
  assert.equal(item["~sk"], item.region);
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.equal(ranges.length, 4);
  const { resources: count } = await container.items.query("SELECT VALUE COUNT(1) FROM c").fetchAll();
  assert.deepEqual(count, [600]);

  // A cursor over many batches, with a filter on the shard key, a sort and a projection.
  const eu = await orders.find({ region: "eu", qty: { $gte: 3 } }, { batchSize: 7, sort: { _id: -1 }, projection: { _id: 1, qty: 1 } }).toArray();
  const want = docs.filter((d) => d.region === "eu" && d.qty >= 3).map((d) => ({ _id: d._id, qty: d.qty })).sort((a, b) => b._id - a._id);
  assert.deepEqual(eu, want);
  // Across partitions: skip and limit after a sort.
  const page = await orders.find({ tags: "gift" }).sort({ price: -1, _id: 1 }).skip(5).limit(10).toArray();
  const gifts = docs.filter((d) => d.tags.includes("gift")).sort((a, b) => b.price - a.price || a._id - b._id).slice(5, 15);
  assert.deepEqual(page.map((d) => d._id), gifts.map((d) => d._id));

  assert.equal(await orders.countDocuments({ region: "us" }), 120);
  assert.equal(await orders.estimatedDocumentCount(), 600);
  assert.deepEqual((await orders.distinct("region")).sort(), [...regions].sort());

  // Updates: operators over many documents, then an upsert.
  const upd = await orders.updateMany({ region: "asia" }, { $inc: { qty: 100 }, $set: { flagged: true } });
  assert.equal(upd.matchedCount, 120);
  assert.equal(upd.modifiedCount, 120);
  assert.equal(await orders.countDocuments({ qty: { $gte: 100 } }), 120);
  const ups = await orders.updateOne({ _id: 1000, region: "eu" }, { $setOnInsert: { qty: 1 }, $push: { tags: "new" } }, { upsert: true });
  assert.equal(ups.upsertedId, 1000);
  assert.deepEqual(await orders.findOne({ _id: 1000, region: "eu" }), { _id: 1000, region: "eu", qty: 1, tags: ["new"] });

  // findOneAndUpdate returns the new document.
  const after = await orders.findOneAndUpdate({ _id: 5, region: "eu" }, { $mul: { price: 2 } }, { returnDocument: "after" });
  assert.equal(after.price, 15); // 1.5 × (5 mod 11), doubled
  // A changed shard key is refused (code 66), as the service does.
  await assert.rejects(orders.updateOne({ _id: 6, region: "us" }, { $set: { region: "eu" } }), (e) => e.code === 66);

  // Aggregation: totals per region, in order.
  const totals = await orders
    .aggregate([{ $match: { _id: { $lt: 600 } } }, { $group: { _id: "$region", n: { $sum: 1 }, qty: { $sum: "$qty" } } }, { $sort: { _id: 1 } }])
    .toArray();
  const expect = [...regions].sort().map((r) => {
    const mine = docs.filter((d) => d.region === r);
    return { _id: r, n: mine.length, qty: mine.reduce((s, d) => s + d.qty + (r === "asia" ? 100 : 0), 0) };
  });
  assert.deepEqual(totals, expect);

  // A duplicate _id in the same logical partition is 11000.
  await assert.rejects(orders.insertOne({ _id: 0, region: "eu" }), (e) => e.code === 11000);
  const del = await orders.deleteMany({ region: "africa" });
  assert.equal(del.deletedCount, 120);
  assert.equal(await orders.countDocuments({}), 481);

  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  assert.ok(names.includes("orders"), names.join(","));
});

test("the Node.js driver: BSON types round-trip, and the NoSQL API reads the documented JSON", async () => {
  const coll = client.db("types").collection("t");
  const oid = new ObjectId();
  const when = new Date("2026-11-24T06:00:00.123Z");
  const doc = {
    _id: oid,
    i32: new Int32(7),
    i64: Long.fromString("9007199254740993"),
    dbl: new Double(2),
    dec: Decimal128.fromString("12345.6789"),
    when,
    bin: new Binary(Buffer.from([0, 1, 2, 255]), 0),
    uuid: new Binary(Buffer.alloc(16, 7), 4),
    nested: { a: [1, { b: null }], z: "last" },
  };
  await coll.insertOne(doc);
  const got = await coll.findOne({ _id: oid }, { promoteValues: false, promoteLongs: false });
  assert.equal(got.i32._bsontype, "Int32");
  assert.equal(got.i64.toString(), "9007199254740993");
  assert.equal(got.dbl._bsontype, "Double");
  assert.equal(got.dec.toString(), "12345.6789");
  assert.equal(got.when.toISOString(), when.toISOString());
  assert.equal(got.bin.sub_type, 0);
  assert.deepEqual([...got.bin.buffer], [0, 1, 2, 255]);
  assert.equal(got.uuid.sub_type, 4);
  assert.deepEqual(Object.keys(got), Object.keys(doc));
  assert.deepEqual(Object.keys(got.nested), ["a", "z"]);

  // The same item through the NoSQL API: the id is the ObjectId's hex, int32
  // and doubles are JSON numbers, int64 is {"$numberLong": ...}.
  const { resources } = await cosmos.database("types").container("t").items.query("SELECT * FROM c").fetchAll();
  assert.equal(resources.length, 1);
  const item = resources[0];
  assert.equal(item.id, oid.toHexString());
  assert.equal(item.i32, 7);
  assert.deepEqual(item.i64, { $numberLong: "9007199254740993" });
  assert.equal(item.nested.z, "last");
});

test("mongosh: an interactive-style session through --eval", async () => {
  const script = `
    const d = db.getSiblingDB("shell");
    d.runCommand({ customAction: "CreateCollection", collection: "people", shardKey: "team", offerThroughput: 400 });
    d.people.insertMany([
      { _id: 1, team: "red", name: "ada", score: 7 },
      { _id: 2, team: "blue", name: "bob", score: 3 },
      { _id: 3, team: "red", name: "cy", score: 9 },
    ]);
    d.people.updateOne({ _id: 2, team: "blue" }, { $inc: { score: 10 } });
    const top = d.people.find({}, { _id: 0, name: 1, score: 1 }).sort({ score: -1 }).toArray();
    const byTeam = d.people.aggregate([{ $group: { _id: "$team", total: { $sum: "$score" } } }, { $sort: { _id: 1 } }]).toArray();
    print(JSON.stringify({ top, byTeam, count: d.people.countDocuments({ team: "red" }), names: d.getCollectionNames() }));
  `;
  const { stdout } = await run(mongosh, [server.mongoURL, "--quiet", "--norc", "--eval", script], {
    timeout: 60000,
    env: { ...process.env, MONGOSH_NO_UPDATE_CHECK: "1", DO_NOT_TRACK: "1" },
  });
  const out = JSON.parse(stdout.trim().split("\n").pop());
  assert.deepEqual(out.top, [
    { name: "bob", score: 13 },
    { name: "cy", score: 9 },
    { name: "ada", score: 7 },
  ]);
  assert.deepEqual(out.byTeam, [
    { _id: "blue", total: 13 },
    { _id: "red", total: 16 },
  ]);
  assert.equal(out.count, 2);
  assert.deepEqual(out.names, ["people"]);
});
