import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

// A server whose partitions split at 256 KB, so that bulk writes split them
// while requests are in flight: JS bulk routes by range id, so a split makes
// some of its requests name a retired range (410/1002) and it must refresh
// and retry by itself without losing an operation.
let server;
let client;

before(async () => {
  server = await startServer(["--partition-max-bytes", "262144", "--no-throttle"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
});

after(async () => {
  client?.dispose?.();
  await server?.stop();
});

test("bulk writes while partitions split: nothing lost, children carry parents", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "split" });
  const { container } = await database.containers.createIfNotExists(
    { id: "c", partitionKey: { paths: ["/pk"] } },
    { offerThroughput: 400 },
  );
  const pad = "p".repeat(1000);
  let written = 0;
  for (let round = 0; round < 8; round++) {
    const ops = [];
    for (let i = 0; i < 250; i++) {
      const n = round * 250 + i;
      ops.push({ operationType: "Create", partitionKey: `k${n % 300}`, resourceBody: { id: `i${n}`, pk: `k${n % 300}`, pad } });
    }
    const results = await container.items.executeBulkOperations(ops);
    const failures = results.filter((r) => r.error || r.response.statusCode !== 201);
    assert.equal(failures.length, 0, JSON.stringify(failures.slice(0, 2)));
    written += ops.length;
  }
  const { resources: ranges } = await container.readPartitionKeyRanges().fetchAll();
  assert.ok(ranges.length >= 4, `only ${ranges.length} ranges after ${written} 1 KB items`);
  for (const r of ranges) {
    if (r.id !== "0") assert.ok(r.parents.length > 0, `range ${r.id} has no parents`);
  }
  for (const n of [0, 1, 299, 1000, 1999]) {
    const { resource } = await container.item(`i${n}`, `k${n % 300}`).read();
    assert.equal(resource.id, `i${n}`);
  }
  const reads = await container.items.executeBulkOperations(
    Array.from({ length: 200 }, (_, i) => ({ operationType: "Read", id: `i${i * 10}`, partitionKey: `k${(i * 10) % 300}` })),
  );
  assert.equal(reads.filter((r) => r.response?.statusCode !== 200).length, 0);
});
