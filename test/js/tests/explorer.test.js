import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { CosmosClient } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

// Parsec Explorer in headless Debian Chromium, against a real server, with
// the JavaScript SDK as the independent witness of what the page did. The
// tests run in order on one page, as a user would: sign in; create a
// database and a 24,000 RU/s container; edit items (and meet a 412);
// query; watch the partitions while a hot key is driven; raise throughput;
// run the advisor; switch the theme. Any console error, page error, failed
// request or unexpected error status fails the run; screenshots go to
// test/artifacts/.

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(here, "../../artifacts");
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

let server, client, browser, page;
const problems = [];
// Error statuses a step expects (the 412 of a conflicting edit); any other
// response of 400 or more is a problem.
const expected = [];

before(async () => {
  if (!existsSync("/usr/bin/chromium")) {
    throw new Error("this test needs Debian's Chromium at /usr/bin/chromium: apt-get install -y chromium (scripts/test.sh does)");
  }
  mkdirSync(artifacts, { recursive: true });
  server = await startServer();
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
  browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 950 } });
  page.setDefaultTimeout(15000);
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/status of (\d+)/.test(msg.text())) problems.push(`console error: ${msg.text()}`);
  });
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText}`));
  page.on("response", (res) => {
    if (res.status() < 400) return;
    const i = expected.indexOf(res.status());
    if (i >= 0) expected.splice(i, 1);
    else problems.push(`unexpected ${res.status()} for ${res.request().method()} ${res.url()}`);
  });
});

after(async () => {
  await browser?.close();
  client?.dispose?.();
  await server?.stop();
});

// noProblems fails a step on anything the page reported since the last one.
function noProblems() {
  const seen = problems.splice(0);
  assert.deepEqual(seen, []);
}

async function shot(name) {
  await page.screenshot({ path: join(artifacts, `explorer-${name}.png`), fullPage: true });
}

// axe runs the accessibility rules on the page as it is and fails on any
// serious or critical violation.
async function axe(view) {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const r = await globalThis.axe.run(document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ")) }));
  });
  const bad = result.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad, [], `${view}: accessibility violations`);
}

// act clears the status line, then clicks: a step that waits for a status
// message then sees the one its own click caused.
async function act(selector) {
  await page.evaluate(() => (document.getElementById("status").textContent = ""));
  await page.click(selector);
}

async function openTab(name) {
  await page.click(`.tabs button[data-tab="${name}"]`);
  await page.waitForSelector(`#view-${name}`);
}

test("the explorer is served at /_explorer/ and /_explorer/index.html, and signs in with the emulator key filled in", async () => {
  const alias = await page.goto(`${server.endpoint.replace(/\/$/, "")}/_explorer/index.html`);
  assert.equal(alias.status(), 200);
  const res = await page.goto(`${server.endpoint.replace(/\/$/, "")}/_explorer/`);
  assert.equal(res.status(), 200);
  assert.match(res.headers()["content-security-policy"], /script-src 'self'/);
  await page.waitForSelector("#signin-view:not([hidden])");
  assert.equal(await page.inputValue("#signin-key"), emulatorKey, "the emulator key is filled in on loopback");
  await axe("sign-in");
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#main-view:not([hidden])");
  const stored = await page.evaluate(() => Object.keys(sessionStorage));
  assert.deepEqual(stored, ["parsec.explorer.key"], "the key is kept in session storage only");
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((k) => localStorage.getItem(k).includes("=="))), []);
  noProblems();
});

test("a wrong key is refused in plain words", async () => {
  const other = await browser.newPage();
  const seen = [];
  other.on("response", (r) => r.status() >= 400 && seen.push(r.status()));
  await other.goto(`${server.endpoint.replace(/\/$/, "")}/_explorer/`);
  await other.fill("#signin-key", Buffer.from("not the key of this server at all").toString("base64"));
  await other.click("#signin-form button[type=submit]");
  await other.waitForSelector("#error:not([hidden])");
  assert.match(await other.textContent("#error"), /^401 Unauthorized: /);
  assert.deepEqual(seen, [401]);
  assert.equal(await other.isHidden("#main-view"), true);
  await other.close();
});

test("create a database and a 24,000 RU/s container from the page", async () => {
  await page.fill("#new-db-id", "shop");
  await page.click("#new-db button[type=submit]");
  await page.waitForSelector('#tree li[data-db="shop"] form');
  await page.fill("#new-coll-shop", "orders");
  await page.fill("#new-pk-shop", "/customer");
  await page.fill("#new-rus-shop", "24000");
  await page.click('#tree li[data-db="shop"] form button[type=submit]');
  await page.waitForSelector("#view-items");
  const { resource } = await client.database("shop").container("orders").read();
  assert.deepEqual(resource.partitionKey.paths, ["/customer"]);
  const offer = await client.database("shop").container("orders").readOffer();
  assert.equal(offer.resource.content.offerThroughput, 24000);
  noProblems();
});

test("browse items by partition key, edit one, and see the 412 when it changed underneath", async () => {
  const orders = client.database("shop").container("orders");
  await Promise.all(
    Array.from({ length: 120 }, (_, i) => orders.items.create({ id: `o${i}`, customer: `c${i % 12}`, n: i, status: "new" })),
  );

  await page.fill("#pk-filter", '"c3"');
  await page.click('form[aria-label="Filter items"] button[type=submit]');
  await page.waitForSelector('#view-items tr[data-id="o3"]');
  const ids = await page.$$eval("#view-items tbody tr[data-id]", (trs) => trs.map((t) => t.dataset.id).sort());
  assert.deepEqual(ids, Array.from({ length: 10 }, (_, k) => `o${3 + 12 * k}`).sort());

  // Edit o15 and save: the SDK sees the change.
  await page.click('#view-items tr[data-id="o15"]');
  await page.waitForSelector("#item-editor");
  const doc = JSON.parse(await page.inputValue("#item-editor"));
  assert.equal(doc.id, "o15");
  assert.equal(doc._etag, undefined, "system properties are not in the editor");
  await page.fill("#item-editor", JSON.stringify({ ...doc, status: "shipped" }, null, 2));
  await act("#save-item");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("saved o15"));
  const { resource: saved } = await orders.item("o15", "c3").read();
  assert.equal(saved.status, "shipped");

  // Invalid JSON cannot be saved.
  await page.fill("#item-editor", '{"id": "o15", ');
  assert.equal(await page.isDisabled("#save-item"), true);
  assert.equal(await page.getAttribute("#item-validity", "class"), "invalid");

  // Someone else changes it; saving the stale edit is a 412 with the newer version shown.
  await page.fill("#item-editor", JSON.stringify({ ...doc, status: "cancelled" }, null, 2));
  await orders.item("o15", "c3").replace({ ...saved, status: "returned" });
  expected.push(412);
  await act("#save-item");
  await page.waitForSelector("#take-newer");
  assert.match(await page.textContent("#error"), /^412 Precondition Failed: /);
  assert.match(await page.textContent("#item-newer"), /"returned"/);
  const { resource: after412 } = await orders.item("o15", "c3").read();
  assert.equal(after412.status, "returned", "the stale edit did not overwrite the newer version");
  assert.deepEqual(expected, [], "the 412 was seen");

  // Take the newer version and save on top of it.
  await page.click("#take-newer");
  const newer = JSON.parse(await page.inputValue("#item-editor"));
  await page.fill("#item-editor", JSON.stringify({ ...newer, status: "refunded" }, null, 2));
  await act("#save-item");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("saved o15"));
  assert.equal((await orders.item("o15", "c3").read()).resource.status, "refunded");
  await shot("items");
  await axe("items");

  // Create an item and delete another from the page.
  await page.click("#new-item");
  await page.fill("#item-editor", JSON.stringify({ id: "made-in-page", customer: "c5", n: 999 }));
  await act("#save-item");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("created made-in-page"));
  assert.equal((await orders.item("made-in-page", "c5").read()).resource.n, 999);
  await page.fill("#pk-filter", '"c3"');
  await page.click('form[aria-label="Filter items"] button[type=submit]');
  await page.click('#view-items tr[data-id="o27"]');
  await page.click("#item-editor ~ .row button.danger");
  await act("#item-editor ~ .row button.danger");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("deleted o27"));
  assert.equal((await orders.item("o27", "c3").read()).statusCode, 404);
  noProblems();
});

test("a cross-partition query with parameters shows results, charge, metrics and the partitions read", async () => {
  await openTab("query");
  const sql = "SELECT c.id, c.customer, c.n FROM c WHERE c.n >= @min ORDER BY c.n DESC";
  await page.fill("#query-text", sql);
  await page.fill("#query-params", '{"@min": 100}');
  await page.focus("#query-text");
  await page.keyboard.press("Control+Enter");
  await page.waitForSelector("#query-charge");
  const shown = JSON.parse(await page.textContent("#query-results pre"));
  const { resources: want } = await client
    .database("shop")
    .container("orders")
    .items.query({ query: sql, parameters: [{ name: "@min", value: 100 }] })
    .fetchAll();
  assert.deepEqual(shown, want);
  assert.equal(shown.length, 21, "n 100..119 and the item made in the page");
  const charge = parseFloat(await page.textContent("#query-charge"));
  assert.ok(charge > 0, `the charge is shown: ${charge}`);
  assert.match(await page.textContent("#query-metrics"), /retrievedDocumentCount/);
  const parts = (await page.textContent("#query-partitions")).replace("partitions read: ", "").split(", ");
  assert.equal(parts.length, 4, `a 24,000 RU/s container has 4 partitions, all read: ${parts}`);

  // The table view shows the same rows.
  await page.check("#as-table");
  const cells = await page.$$eval("#results-table tbody tr", (trs) => trs.map((t) => t.querySelector("td").textContent));
  assert.deepEqual(cells, want.map((r) => JSON.stringify(r.id)));

  // Paging: two results a page is not offered in the page, but a query that
  // returns more than a page (100) pages through continuations.
  await page.uncheck("#as-table");
  await page.fill("#query-text", "SELECT VALUE c.n FROM c");
  await page.fill("#query-params", "");
  await page.click("#run-query");
  await page.waitForFunction(() => document.getElementById("query-summary").textContent.includes("page 1 ("));
  const first = JSON.parse(await page.textContent("#query-results pre"));
  assert.equal(first.length, 100);
  await page.click("#next-page");
  await page.waitForFunction(() => document.getElementById("query-summary").textContent.includes("page 2 ("));
  const second = JSON.parse(await page.textContent("#query-results pre"));
  assert.equal(first.length + second.length, 120, "119 orders left and the item made in the page");
  assert.equal(await page.isHidden("#next-page"), true);

  // A bad query is a 400 with the server's message.
  expected.push(400);
  await page.fill("#query-text", "SELECT FROM WHERE");
  await page.click("#run-query");
  await page.waitForSelector("#error:not([hidden])");
  assert.match(await page.textContent("#error"), /^400 Bad Request: /);
  assert.deepEqual(expected, []);
  await page.fill("#query-text", sql);
  await page.fill("#query-params", '{"@min": 100}');
  await page.click("#run-query");
  await page.waitForSelector("#query-metrics");
  await shot("query");
  await axe("query");
  noProblems();
});

// partitionState reads the strip: per partition its utilization, colour
// class and hottest key.
async function partitionState() {
  return page.$$eval("#partition-strip button.part", (bs) =>
    bs.map((b) => ({ id: b.dataset.id, u: parseFloat(b.dataset.utilization), hot: b.classList.contains("hot"), key: b.dataset.hotKey, bg: b.style.background })),
  );
}

test("the partitions strip turns the hot key's partition warm within seconds and names the key", async () => {
  await openTab("partitions");
  await page.waitForFunction(() => document.querySelectorAll("#partition-strip button.part").length === 4);
  // Wait for a quiet second: nothing is written, so every partition is idle.
  await page.waitForFunction(
    () => [...document.querySelectorAll("#partition-strip button.part")].every((b) => b.classList.contains("cold")),
    null,
    { timeout: 10000 },
  );
  const orders = client.database("shop").container("orders");
  let stop = false;
  let written = 0;
  const writer = async (w) => {
    for (let i = 0; !stop; i++) {
      await orders.items.upsert({ id: `hot-${w}-${i % 50}`, customer: "hot-customer", pad: "x".repeat(800) });
      written++;
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  try {
    await page.waitForFunction(
      () => [...document.querySelectorAll("#partition-strip button.part")].some((b) => b.classList.contains("hot") && b.dataset.hotKey.includes("hot-customer")),
      null,
      { timeout: 15000, polling: 200 },
    );
    const parts = await partitionState();
    const hot = parts.find((p) => p.hot && p.key.includes("hot-customer"));
    assert.ok(hot.u > 0 && hot.bg !== "", `the hot partition is coloured: ${JSON.stringify(hot)}`);
    const others = parts.filter((p) => p.id !== hot.id);
    assert.ok(others.every((p) => !p.key.includes("hot-customer")), "only one partition holds the hot key");
    // The table and the detail panel name it too.
    await page.click(`#partition-strip button.part[data-id="${hot.id}"]`);
    await page.waitForSelector("#partition-sample pre");
    assert.match(await page.textContent("#partition-detail"), /hot-customer/);
    const sample = JSON.parse(await page.textContent("#partition-sample pre"));
    assert.ok(sample.length > 0 && sample.length <= 10);
    await shot("partitions");
  } finally {
    stop = true;
    await Promise.all(writers);
  }
  assert.ok(written > 0);
  await axe("partitions");
  noProblems();
});

test("raising throughput from the settings splits the container, and the strip shows the new partitions live", async () => {
  await openTab("settings");
  await page.waitForFunction(() => document.getElementById("throughput").value === "24000");
  await page.fill("#throughput", "80000");
  await act("#save-throughput");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("80,000 RU/s"));
  const orders = client.database("shop").container("orders");
  assert.equal((await orders.readOffer()).resource.content.offerThroughput, 80000);

  // The indexing policy: invalid JSON cannot be saved; a valid one is.
  await page.fill("#indexing-policy", "{ not json");
  assert.equal(await page.isDisabled("#save-policy"), true);
  const policy = { indexingMode: "consistent", includedPaths: [{ path: "/*" }], excludedPaths: [{ path: "/pad/?" }, { path: '/"_etag"/?' }] };
  await page.fill("#indexing-policy", JSON.stringify(policy, null, 2));
  await act("#save-policy");
  await page.waitForFunction(() => document.getElementById("status").textContent.includes("indexing policy of shop/orders saved"));
  const { resource: def } = await orders.read();
  assert.ok(def.indexingPolicy.excludedPaths.some((p) => p.path === "/pad/?"), JSON.stringify(def.indexingPolicy));
  await axe("settings");

  await openTab("partitions");
  await page.waitForFunction(() => document.querySelectorAll("#partition-strip button.part").length === 8);
  // While the page watches, raise it again through the SDK: the new
  // partitions and the change appear in the page as they happen.
  const { resource: offer } = await orders.readOffer();
  await client.offer(offer.id).replace({ ...offer, content: { ...offer.content, offerThroughput: 160000 } });
  await page.waitForFunction(() => document.querySelectorAll("#partition-strip button.part").length === 16, null, { timeout: 10000 });
  await page.waitForFunction(() => document.getElementById("partition-events").textContent.includes("throughput 80,000 → 160,000 RU/s"));
  const events = await page.textContent("#partition-events");
  assert.match(events, /partition \d+ split into \d+, \d+/);
  const history = await page.textContent("#split-history");
  assert.match(history, /partition \d+ from \d+/);
  const widths = await page.$$eval("#partition-strip button.part", (bs) => bs.map((b) => b.getBoundingClientRect().width));
  const total = widths.reduce((a, b) => a + b, 0);
  assert.ok(widths.every((w) => Math.abs(w - total / 16) < 2), `16 equal ranges are drawn equally wide: ${widths}`);
  noProblems();
});

test("the advisor runs on the live container from the page", async () => {
  await openTab("advice");
  await page.fill("#advice-candidates", "/status\n/n");
  await page.click("#run-advice");
  await page.waitForSelector("#advice-ranking", { timeout: 60000 });
  const rows = await page.$$eval("#advice-ranking tbody tr", (trs) => trs.map((t) => [...t.querySelectorAll("td")].map((td) => td.textContent)));
  assert.deepEqual(rows.map((r) => r[0]), ["1", "2", "3"]);
  const keys = rows.map((r) => r[1]);
  assert.ok(keys.includes("/customer (current)"), `the current key is ranked: ${keys}`);
  assert.ok(keys.includes("/status") && keys.includes("/n"), `${keys}`);
  assert.ok(rows.every((r) => r[2].length > 0 && r[5].length > 0), "every candidate has a verdict and reasons");
  await shot("advice");
  await axe("advice");
  noProblems();
});

test("dark theme, kept across reloads, and the session survives a reload", async () => {
  await page.click("#theme");
  assert.equal(await page.getAttribute("html", "data-theme"), "dark");
  await page.reload();
  await page.waitForSelector("#main-view:not([hidden])");
  assert.equal(await page.getAttribute("html", "data-theme"), "dark");
  await page.click('#tree li[data-db="shop"] > .node button.name');
  await page.click('#tree li[data-coll="orders"] button.name');
  await openTab("partitions");
  await page.waitForFunction(() => document.querySelectorAll("#partition-strip button.part").length === 16);
  await shot("dark");
  await axe("partitions, dark");
  await page.click("#signout");
  await page.waitForSelector("#signin-view:not([hidden])");
  assert.deepEqual(await page.evaluate(() => Object.keys(sessionStorage)), []);
  noProblems();
});

test("delete a container and a database from the page", async () => {
  await page.fill("#signin-key", emulatorKey);
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#main-view:not([hidden])");
  await client.databases.create({ id: "scratch" });
  await client.database("scratch").containers.create({ id: "tmp", partitionKey: { paths: ["/pk"] } });
  await page.click("#refresh-tree");
  await page.click('#tree li[data-db="scratch"] > .node button.name');
  await page.click('#tree li[data-db="scratch"] li[data-coll="tmp"] button.name');
  await openTab("settings");
  await page.click("#view-settings button.danger");
  await act("#view-settings button.danger");
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("deleted container scratch/tmp"));
  await assert.rejects(client.database("scratch").container("tmp").read(), (e) => e.code === 404);
  await page.click('#tree li[data-db="scratch"] > .node button.danger');
  await act('#tree li[data-db="scratch"] > .node button.danger');
  await page.waitForFunction(() => document.getElementById("status").textContent.startsWith("deleted database scratch"));
  await assert.rejects(client.database("scratch").read(), (e) => e.code === 404);
  assert.equal(await page.$('#tree li[data-db="scratch"]'), null);
  noProblems();
});
