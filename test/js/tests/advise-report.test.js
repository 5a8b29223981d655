import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

// `parsec advise --html` writes a self-contained report. This test opens it
// in headless Debian Chromium (never a browser downloaded by playwright) and
// checks that it renders without errors: the ranking table, and per
// candidate the partition bars and the key-frequency chart.

const here = dirname(fileURLToPath(import.meta.url));
const artifacts = resolve(here, "../../artifacts");

// A week of IoT readings in time order: 200 devices with skewed activity.
function sample(n) {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const start = Date.UTC(2024, 2, 1) / 1000;
  const lines = [];
  for (let i = 0; i < n; i++) {
    const dev = Math.floor(200 * Math.pow(rand(), 1.6));
    const ts = start + Math.floor((i * 7 * 86400) / n);
    const date = new Date(ts * 1000).toISOString().slice(0, 10);
    lines.push(
      JSON.stringify({
        id: `r-${i}`,
        deviceId: `dev-${String(dev).padStart(3, "0")}`,
        vin: `1FTVIN${String(dev * 7919).padStart(11, "0")}`,
        date,
        ts,
        _ts: ts,
        temperature: Math.round((20 + 5 * Math.sin(ts / 13751) + rand()) * 100) / 100,
      }),
    );
  }
  return lines.join("\n") + "\n";
}

test("advise --html report renders in headless Chromium", async () => {
  const bin = process.env.PARSEC_BIN;
  if (!bin) throw new Error("PARSEC_BIN must name the parsec binary");
  if (!existsSync("/usr/bin/chromium")) {
    throw new Error("this test needs Debian's Chromium at /usr/bin/chromium: apt-get install -y chromium (scripts/test.sh does)");
  }
  const dir = mkdtempSync(join(tmpdir(), "parsec-advise-"));
  const samplePath = join(dir, "iot.ndjson");
  const reportPath = join(dir, "report.html");
  writeFileSync(samplePath, sample(8000));
  const candidates = ["/date", "/deviceId", 'concat(/date, ".", hash(/vin, 400))', 'concat(/date, ".", random(1, 400))'];
  const args = ["advise", "--sample", samplePath, "--partitions", "4", "--html", reportPath, "--json"];
  for (const c of candidates) args.push("--candidate", c);
  const report = JSON.parse(execFileSync(bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
  assert.equal(report.candidates.length, candidates.length);
  const html = readFileSync(reportPath, "utf8");
  assert.doesNotMatch(html, /<link|\ssrc=|https?:\/\//, "the report must not load anything from outside");

  mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems = [];
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
    });
    page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()}`));
    const requests = [];
    page.on("request", (req) => requests.push(req.url()));
    await page.goto(pathToFileURL(reportPath).href, { waitUntil: "load" });

    // The ranking table: one row per candidate, in rank order.
    const rows = await page.$$eval("#ranking tbody tr", (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent.trim())),
    );
    assert.equal(rows.length, candidates.length);
    assert.deepEqual(
      rows.map((r) => r[0]),
      candidates.map((_, i) => String(i + 1)),
    );
    assert.deepEqual(
      rows.map((r) => r[1]).sort(),
      [...candidates].sort(),
    );
    assert.equal(rows[rows.length - 1][1], "/date", "the monotonic date key ranks last");

    // Per candidate: storage and current-write bars for 4 partitions, and a
    // key-frequency chart, all drawn with a visible size.
    const sections = await page.$$eval("section.candidate", (secs) =>
      secs.map((s) => {
        const bars = (cls) =>
          Array.from(s.querySelectorAll(`svg.chart.${cls} rect.bar`)).map((r) => {
            const box = r.getBoundingClientRect();
            return { w: box.width, h: box.height };
          });
        return { key: s.dataset.key, storage: bars("storage"), writes: bars("writes"), keys: bars("keys") };
      }),
    );
    assert.equal(sections.length, candidates.length);
    for (const s of sections) {
      assert.equal(s.storage.length, 4, `${s.key}: storage bars`);
      assert.equal(s.writes.length, 4, `${s.key}: current-write bars`);
      assert.ok(s.keys.length > 0, `${s.key}: key-frequency bars`);
      assert.ok(s.storage.some((b) => b.w > 0 && b.h > 0), `${s.key}: storage bars are drawn`);
      assert.ok(s.writes.some((b) => b.w > 0 && b.h > 0), `${s.key}: write bars are drawn`);
      assert.ok(s.keys.every((b) => b.w > 0), `${s.key}: key bars are drawn`);
    }
    const date = sections.find((s) => s.key === "/date");
    assert.equal(date.writes.filter((b) => b.h > 0).length, 1, "/date writes all current documents to one partition");

    // The inline script: clicking a ranking row highlights its section.
    await page.click("#ranking tbody tr:nth-child(2)");
    const active = await page.$eval("section.candidate.active", (s) => s.id);
    assert.equal(active, "cand-2");

    await page.screenshot({ path: join(artifacts, "advise-report.png"), fullPage: true });
    assert.deepEqual(problems, []);
    assert.ok(
      requests.every((u) => u.startsWith("file:")),
      `the report requested ${requests.filter((u) => !u.startsWith("file:")).join(", ")}`,
    );
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
