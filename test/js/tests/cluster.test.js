import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CosmosClient } from "@azure/cosmos";
import { emulatorKey, rawRequest } from "./server.js";

// Three parsec serve processes form a cluster on loopback. JS bulk writers
// upsert through all three nodes while the node that leads the most
// partitions is killed with SIGKILL and restarted, three times; at the end
// every acknowledged write reads back through every node with its last
// acknowledged value (or a later one whose outcome the writer could not
// know).

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

const dirs = [];
const children = new Set();
after(() => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function makeNode(id) {
  const dir = mkdtempSync(join(tmpdir(), `parsec-cluster-${id}-`));
  dirs.push(dir);
  return { id, dir, port: await freePort(), clusterPort: await freePort() };
}

function start(node, join) {
  const args = ["serve", "--data", node.dir, "--listen", `127.0.0.1:${node.port}`, "--no-throttle",
    "--partition-max-rus", "1000", "--consistency", "strong", "--node-id", String(node.id), "--cluster-listen", `127.0.0.1:${node.clusterPort}`];
  if (join) args.push("--join", join);
  const child = spawn(process.env.PARSEC_BIN, args, { stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  node.child = child;
  let out = "";
  child.stderr.on("data", (d) => (out += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`node ${node.id} did not start: ${out}`)), 60000);
    child.stdout.on("data", (d) => {
      out += d;
      if (/Parsec Explorer at /.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => {
      children.delete(child);
      clearTimeout(timer);
      reject(new Error(`node ${node.id} exited with ${code}: ${out}`));
    });
  });
}

function kill(node) {
  return new Promise((resolve) => {
    node.child.once("exit", resolve);
    node.child.kill("SIGKILL");
  });
}

const endpoint = (n) => `http://127.0.0.1:${n.port}`;

test("bulk writes through three nodes survive SIGKILLs of leaders", { timeout: 180000 }, async () => {
  const nodes = [await makeNode(1), await makeNode(2), await makeNode(3)];
  await start(nodes[0]);
  await start(nodes[1], `127.0.0.1:${nodes[0].clusterPort}`);
  await start(nodes[2], `127.0.0.1:${nodes[0].clusterPort}`);
  const clients = nodes.map((n) => new CosmosClient({ endpoint: endpoint(n), key: emulatorKey }));
  const { database } = await clients[1].databases.createIfNotExists({ id: "bulk" });
  await database.containers.createIfNotExists(
    { id: "events", partitionKey: { paths: ["/device"] } },
    { offerThroughput: 4000 },
  );

  // Writer w owns keys "w<w>-<k>": the last acknowledged value of each, and
  // the values sent since without a known outcome.
  const state = new Map();
  let stop = false;
  let acked = 0;
  let failedOps = 0;
  const writer = async (w) => {
    const container = clients[w % 3].database("bulk").container("events");
    for (let v = 1; !stop; v++) {
      const ops = [];
      for (let k = 0; k < 25; k++) {
        const id = `w${w}-${k}`;
        ops.push({ operationType: "Upsert", partitionKey: id, resourceBody: { id, device: id, v } });
      }
      let results;
      try {
        results = await container.items.executeBulkOperations(ops);
      } catch {
        results = [];
      }
      for (let i = 0; i < ops.length; i++) {
        const id = ops[i].resourceBody.id;
        const s = state.get(id) ?? { acked: 0, unknown: new Set() };
        state.set(id, s);
        const r = results[i];
        const code = r?.response?.statusCode;
        if (!r?.error && (code === 200 || code === 201)) {
          s.acked = v;
          s.unknown = new Set();
          acked++;
        } else {
          s.unknown.add(v);
          failedOps++;
        }
      }
      if (results.length === 0) await new Promise((r) => setTimeout(r, 50));
    }
  };
  const writers = [0, 1, 2, 3, 4, 5].map(writer);

  const status = async () => {
    for (const n of nodes) {
      try {
        const res = await rawRequest(endpoint(n), "GET", "/_cluster");
        if (res.status === 200) return res.body;
      } catch {
        // a node that is down: ask the next
      }
    }
    throw new Error("no node answers GET /_cluster");
  };
  for (let k = 0; k < 3; k++) {
    await new Promise((r) => setTimeout(r, 3000));
    const st = await status();
    const most = st.nodes.reduce((a, b) => (b.partitionsLed > a.partitionsLed ? b : a));
    const victim = nodes[most.id - 1];
    await kill(victim);
    await new Promise((r) => setTimeout(r, 1000));
    await start(victim, `127.0.0.1:${nodes[victim.id % 3].clusterPort}`);
  }
  await new Promise((r) => setTimeout(r, 3000));
  stop = true;
  await Promise.all(writers);
  assert.ok(acked > 0, "no write was acknowledged");

  for (const [i, client] of clients.entries()) {
    const container = client.database("bulk").container("events");
    for (const [id, s] of state) {
      if (s.acked === 0) continue;
      const { resource, statusCode } = await container.item(id, id).read().catch((e) => ({ statusCode: e.code }));
      assert.equal(statusCode, 200, `node ${i + 1}: read ${id}`);
      assert.ok(
        resource.v === s.acked || (resource.v > s.acked && s.unknown.has(resource.v)),
        `node ${i + 1}: ${id} holds v=${resource.v}; acknowledged ${s.acked}, unknown ${[...s.unknown]}`,
      );
    }
  }
  console.log(`cluster: ${acked} bulk operations acknowledged, ${failedOps} failed or unknown, over 3 kills`);
  for (const c of clients) c.dispose?.();
  for (const n of nodes) await kill(n);
});
