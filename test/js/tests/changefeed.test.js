import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  ChangeFeedMode,
  ChangeFeedPolicy,
  ChangeFeedRetentionTimeSpan,
  ChangeFeedStartFrom,
  CosmosClient,
  StatusCodes,
} from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

// The latest-version change feed through the JavaScript SDK's
// getChangeFeedIterator: every start mode, feed ranges, a partition key,
// and a continuation token that outlives a split.
let server;
let client;
let container;

before(async () => {
  server = await startServer(["--no-throttle"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  const { database } = await client.databases.createIfNotExists({ id: "feed" });
  ({ container } = await database.containers.createIfNotExists({ id: "c", partitionKey: { paths: ["/pk"] } }, { offerThroughput: 12000 }));
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

// drain reads an iterator until it reports nothing new (304) and returns
// id → the versions seen, and the continuation to go on from.
async function drain(iterator) {
  const seen = new Map();
  let continuation;
  for (let i = 0; i < 500 && iterator.hasMoreResults; i++) {
    const res = await iterator.readNext();
    continuation = res.continuationToken;
    for (const d of res.result) seen.set(d.id, [...(seen.get(d.id) || []), d.v]);
    if (res.statusCode === StatusCodes.NotModified) return { seen, continuation };
  }
  throw new Error("the change feed never ran dry");
}

const put = (id, v, pk = `k${id.length % 5}${id.slice(-1)}`) => container.items.upsert({ id, pk, v });

test("from the beginning, from now, from a time, by feed range and by partition key", async () => {
  for (let i = 0; i < 60; i++) await put(`a${i}`, 1);
  const all = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(), maxItemCount: 7 }));
  assert.equal(all.seen.size, 60);
  assert.ok([...all.seen.values()].every((vs) => vs.length === 1 && vs[0] === 1));

  // Per feed range: the ranges together give every item once.
  const ranges = await container.getFeedRanges();
  assert.equal(ranges.length, 2, "12,000 RU/s is two partitions");
  const union = new Map();
  for (const r of ranges) {
    const part = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning(r) }));
    for (const [id, vs] of part.seen) {
      assert.ok(!union.has(id), `${id} in two feed ranges`);
      union.set(id, vs);
    }
    assert.ok(part.seen.size > 0, "each range holds some items");
  }
  assert.equal(union.size, 60);

  // One partition key.
  const k = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Beginning("k21") }));
  const want = [...all.seen.keys()].filter((id) => `k${id.length % 5}${id.slice(-1)}` === "k21").sort();
  assert.deepEqual([...k.seen.keys()].sort(), want);
  assert.ok(want.length > 0);

  // From now: only what is written later; from a time: what is written after it.
  const now = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() }));
  assert.equal(now.seen.size, 0);
  await new Promise((r) => setTimeout(r, 1100));
  const since = new Date();
  await new Promise((r) => setTimeout(r, 1100));
  await put("late1", 1);
  await put("a3", 2);
  const later = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(now.continuation) }));
  assert.deepEqual([...later.seen.entries()].sort(), [["a3", [2]], ["late1", [1]]]);
  const fromTime = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Time(since) }));
  assert.deepEqual([...fromTime.seen.keys()].sort(), ["a3", "late1"]);
});

test("a continuation token outlives a split: each change once, in its latest version", async () => {
  const start = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Now() }));
  // Raise the throughput: two partitions become eight.
  const { resource: offer } = await container.readOffer();
  for (let i = 0; i < 40; i++) await put(`b${i}`, 1);
  await client.offer(offer.id).replace({ ...offer, content: { ...offer.content, offerThroughput: 80000 } });
  const ranges = await container.getFeedRanges();
  assert.equal(ranges.length, 8);
  for (let i = 0; i < 40; i++) await put(`b${i}`, 2);
  for (let i = 0; i < 40; i++) await put(`c${i}`, 1);
  const { seen } = await drain(container.items.getChangeFeedIterator({ changeFeedStartFrom: ChangeFeedStartFrom.Continuation(start.continuation), maxItemCount: 9 }));
  assert.equal(seen.size, 80);
  for (let i = 0; i < 40; i++) {
    assert.deepEqual(seen.get(`b${i}`), [2], `b${i}`);
    assert.deepEqual(seen.get(`c${i}`), [1], `c${i}`);
  }
});

test("all versions and deletes: every create, replace and delete in order, with metadata", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "feed" });
  const { container: avad } = await database.containers.createIfNotExists({
    id: "avad",
    partitionKey: { paths: ["/pk"] },
    changeFeedPolicy: new ChangeFeedPolicy(ChangeFeedRetentionTimeSpan.fromMinutes(10)),
  });
  const options = { changeFeedStartFrom: ChangeFeedStartFrom.Now(), changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes };
  const start = await drainEvents(avad.items.getChangeFeedIterator(options));
  assert.equal(start.events.length, 0);
  await avad.items.create({ id: "a", pk: "p", v: 1 });
  await avad.items.upsert({ id: "a", pk: "p", v: 2 });
  await avad.items.create({ id: "b", pk: "q", v: 1 });
  await avad.item("a", "p").delete();
  const { events } = await drainEvents(
    avad.items.getChangeFeedIterator({ ...options, changeFeedStartFrom: ChangeFeedStartFrom.Continuation(start.continuation) }),
  );
  const seen = events.map((e) =>
    e.metadata.operationType === "delete" ? `delete ${e.metadata.id}` : `${e.metadata.operationType} ${e.current.id} v${e.current.v}`,
  );
  assert.deepEqual(seen.filter((x) => x.includes(" a")), ["create a v1", "replace a v2", "delete a"]);
  assert.deepEqual(seen.filter((x) => x.includes(" b")), ["create b v1"]);
  for (const e of events) assert.ok(e.metadata.lsn > 0 && e.metadata.crts > 0, JSON.stringify(e));
});

test("all versions and deletes cannot start from the beginning or from a time", async () => {
  // The service keeps the versions and deletes only for the policy's
  // retention and refuses a read without a position with a 400 (the .NET
  // SDK's emulator test ChangeFeedIteratorCore_WithFullFidelityReadFromBeginning
  // in Microsoft.Azure.Cosmos.EmulatorTests/FeedToken/ChangeFeedIteratorCoreTests.cs),
  // worded "Start from beginning is not supported with 'All Versions and
  // Deletes' mode.", which is also its answer to a start time sent in that
  // mode (Azure/azure-cosmos-dotnet-v3 issue 5846: a processor that sent
  // If-Modified-Since got exactly this).
  const { database } = await client.databases.createIfNotExists({ id: "feed" });
  const { container: avad } = await database.containers.createIfNotExists({
    id: "avad-start",
    partitionKey: { paths: ["/pk"] },
    changeFeedPolicy: new ChangeFeedPolicy(ChangeFeedRetentionTimeSpan.fromMinutes(10)),
  });
  await avad.items.create({ id: "a", pk: "p" });
  for (const changeFeedStartFrom of [ChangeFeedStartFrom.Beginning(), ChangeFeedStartFrom.Time(new Date(Date.now() - 60000))]) {
    const iterator = avad.items.getChangeFeedIterator({ changeFeedStartFrom, changeFeedMode: ChangeFeedMode.AllVersionsAndDeletes });
    await assert.rejects(
      iterator.readNext(),
      (e) => e.code === 400 && e.message.includes("Start from beginning is not supported with 'All Versions and Deletes' mode."),
    );
  }
});

// drainEvents reads an all-versions iterator until it reports nothing new.
async function drainEvents(iterator) {
  const events = [];
  let continuation;
  for (let i = 0; i < 200 && iterator.hasMoreResults; i++) {
    const res = await iterator.readNext();
    continuation = res.continuationToken;
    events.push(...res.result);
    if (res.statusCode === StatusCodes.NotModified) return { events, continuation };
  }
  throw new Error("the change feed never ran dry");
}
