// The differential test: one sequence of @azure/data-tables calls, error
// cases included, run against Azurite 3.35.0 (Azure Table storage's
// emulator, in memory) and against Parsec in both URL styles, compared step
// by step: entities returned, their properties and EDM types, status codes
// and error codes. Parsec implements Cosmos DB's Table API, so the
// comparison tolerates the differences between Cosmos DB and Table storage
// that Microsoft documents, listed in `tolerated` below with their sources.
// Where Azurite is known not to do what the service documents (it checks
// no property names, sizes of entities or SAS key ranges), a step states
// the documented outcome and Parsec is held to that. Any other difference
// fails the test. TABLES_DIFF_TRACE=1 prints every step's outcomes.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { TableServiceClient, TableClient, AzureNamedKeyCredential, AzureSASCredential, generateTableSas } from "@azure/data-tables";
import { startParsecTables, startAzurite, styles, clientOptions, emulatorKey, azuriteAccount, azuriteKey, errInfo, collect } from "./tables-common.js";

// Differences the comparison tolerates. Each is a function of the two
// outcomes (Azurite's, Parsec's) that says whether Parsec's is the
// documented Cosmos DB behaviour; a step names the one that applies to it.
//
// Always applied, by normalisation rather than per step:
//   - Etag and Timestamp values: each server stamps its own clock, so only
//     their presence and form are compared (an etag is W/"datetime'…'", a
//     timestamp an ISO 8601 time), and that an update changes the etag.
//   - Error messages: both services put a per-request RequestId and Time in
//     the message ("Status and error codes",
//     learn.microsoft.com/rest/api/storageservices/status-and-error-codes2),
//     and programs are to act on the code; so only the status, the error
//     code and, for a batch, the index of the failed operation that begins
//     the message ("<index>:…", Storage "Performing entity group
//     transactions") are compared.
//   - odata.metadata: a URL naming the server; only the part after '#'.
//   - Order of query results: "Query results returned by the API for Table
//     aren't sorted in partition key/row key order as they are in Azure
//     Table storage" (learn.microsoft.com/azure/cosmos-db/table/faq, "Where
//     is API for Table not identical with Azure Table storage behavior?").
//     Results are compared as sets sorted by keys, and pages only by size
//     (at most maxPageSize each), since page boundaries follow the order.
const tolerated = {
  // "Table names in Azure Table storage aren't case-sensitive, but they
  // are in Azure Cosmos DB for Table" (same FAQ). Addressing a table by
  // another case may find it (Storage) or not (Cosmos: 404 TableNotFound).
  tableNameCase: (_az, px) => px.error?.status === 404 && px.error?.code === "TableNotFound",
  // "Row keys can only be up to 255 bytes" in Cosmos DB (same FAQ), 1 KiB
  // in Storage (learn.microsoft.com/rest/api/storageservices/
  // understanding-the-table-service-data-model). A longer one may be
  // refused with 400.
  rowKeyLength: (_az, px) => px.error?.status === 400,
  // Entity size: 1 MiB in Storage, strings counted in UTF-16 (data-model
  // page); in Cosmos DB an item is at most 2 MB, "UTF-8 length of JSON
  // representation" (learn.microsoft.com/azure/cosmos-db/concepts-limits,
  // "Per-item limits"). An entity between the two may be accepted.
  entitySize: (_az, px) => px.ok !== undefined,
  // "Batches can only have up to 2 MBs" in Cosmos DB (same FAQ); Storage
  // allows 4 MiB. A batch between the two may be refused (413 or 400).
  batchSize: (_az, px) => px.error?.status === 413 || px.error?.status === 400,
  // Cosmos DB refuses an empty PartitionKey or RowKey where Storage takes
  // it: Microsoft's Storage Explorer team, asked to make the two agree,
  // answered "Won't fix. CosmosDB and table are just inherently different
  // services/APIs" (microsoft/AzureStorageExplorer#3211). Refusal is 400.
  emptyKeys: (_az, px) => px.error?.status === 400,
};

// Where Azurite is known not to do what the service documents, a step
// states the documented outcome (service) and Parsec is held to that
// instead; Azurite's answer is not used. The reasons:
const names =
  "Azurite does not check property names or their number; the service allows C# identifiers of up to 255 characters and " +
  "252 properties besides PartitionKey, RowKey and Timestamp (understanding-the-table-service-data-model), and names the " +
  "errors PropertyNameInvalid, PropertyNameTooLong and TooManyProperties (table-service-error-codes)";
const values =
  "Azurite stores a value its EDM type cannot hold; the data model gives Int32 and Int64 their ranges, a Guid its form and " +
  "DateTime a range from 1601-01-01 (understanding-the-table-service-data-model), and the service refuses what it cannot read with 400";
const sasRange =
  "Azurite ignores spk/epk; a service SAS with them \"only authorizes access to entities\" in that range " +
  "(create-service-sas; the SDK's TableSasSignatureValues says the same)";
// Azurite answers these with an odata.error whose code is empty, so only
// the status is compared.
const azuriteNoCode = "Azurite's error has no code";
// Azurite drops the Edm.Double annotation of a whole-number Double (it
// reads the value back as Int32); the service keeps a property's type,
// and annotates whole Doubles so that they are not read as Int32
// (payload-format-for-table-service-operations). The fix restores the type
// the SDK sent.
function wholeDouble(r) {
  if (r.ok?.dWhole) r.ok.dWhole = { value: 4, type: "Double" };
  return r;
}

let azurite;
const parsec = [];
before(async () => {
  // One after the other, so that each started process is stopped by after.
  azurite = await startAzurite();
  // Enough throughput that the sequence is not throttled: Storage has no
  // request units, so a 429 would be a difference of configuration.
  for (let i = 0; i < styles.length; i++) parsec.push(await startParsecTables(["--table-throughput", "100000"]));
});
after(async () => {
  await Promise.all([azurite?.stop(), ...parsec.map((p) => p.stop())]);
});

// outcome runs one step and returns what a program sees.
async function outcome(fn) {
  try {
    const v = await fn();
    // A write answers with response headers (request ids, dates): only
    // its success is compared.
    if (v === undefined || (v && typeof v === "object" && "requestId" in v)) return { ok: null };
    return { ok: JSON.parse(JSON.stringify(v, (_, x) => (typeof x === "bigint" ? `${x}n` : x))) };
  } catch (e) {
    const i = errInfo(e);
    const index = /^(\d+):/.exec(i.message ?? "");
    return { error: { status: i.status, code: i.odataCode, sdkCode: i.code ?? null, ...(index && { index: Number(index[1]) }) } };
  }
}

const etagForm = /^W\/"datetime'[^']+'"$/;
// entity normalises an entity read with disableTypeConversion.
function entity(e) {
  const out = {};
  for (const [k, v] of Object.entries(e)) {
    if (k === "etag") {
      assert.match(v, etagForm, `etag ${v}`);
      out.etag = "<etag>";
    } else if (k === "timestamp") {
      assert.ok(!Number.isNaN(Date.parse(typeof v === "object" ? v.value : v)), `timestamp ${JSON.stringify(v)}`);
      out.timestamp = "<timestamp>";
    } else if (k === "odata.metadata") {
      // A URL naming the server; Azurite names the wrong entity set for
      // an entity with empty keys, so only its presence is compared.
      out[k] = "<present>";
    } else out[k] = v;
  }
  return out;
}
// Sorted by keys, or by content when $select left the keys out.
const sortKey = (e) => (e.partitionKey !== undefined ? JSON.stringify([e.partitionKey, e.rowKey]) : JSON.stringify(e));
const byKeys = (a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0);
async function list(t, queryOptions, maxPageSize) {
  const pages = await collect(t.listEntities({ queryOptions, disableTypeConversion: true }).byPage({ maxPageSize }));
  if (maxPageSize) for (const p of pages) assert.ok(p.length <= maxPageSize, `a page of ${p.length} > ${maxPageSize}`);
  return pages.flat().map(entity).sort(byKeys);
}
// status returns the HTTP status of a call the SDK may swallow (createTable
// and deleteTable ignore 409 and 404).
async function status(call) {
  let s;
  await call({ onResponse: (r) => (s = r.status) });
  return s;
}

const big = (n) => "x".repeat(n);
const typed = {
  partitionKey: "pk",
  rowKey: "all",
  s: "héllo ✓ 𝄞",
  i32: -17,
  i64: { value: "-9223372036854775808", type: "Int64" },
  d: 2.5,
  dWhole: { value: 4, type: "Double" },
  nan: { value: "NaN", type: "Double" },
  inf: { value: "Infinity", type: "Double" },
  b: true,
  dt: { value: "2024-02-29T12:34:56.1234567Z", type: "DateTime" },
  g: { value: "0f8fad5b-d9cb-469f-a165-70867728950e", type: "Guid" },
  bin: new Uint8Array([0, 1, 254, 255]),
};

// The sequence. Each step returns a plain value to compare; a step may name
// the tolerance that applies to it.
function steps(ctx) {
  const { svc, t, tableSas } = ctx;
  const T = "difftab";
  const get = (pk, rk, table = T) => t(table).getEntity(pk, rk, { disableTypeConversion: true }).then(entity);
  const etags = {};
  return [
    ["create table", () => status((o) => svc.createTable(T, o))],
    ["create the same table", () => status((o) => svc.createTable(T, o))],
    ["create a second table", () => status((o) => svc.createTable("difftab2", o))],
    ["invalid table name", () => svc.createTable("1bad"), { statusOnly: azuriteNoCode }],
    ["table name too short", () => svc.createTable("ab"), { statusOnly: azuriteNoCode }],
    ["list tables", async () => (await collect(svc.listTables({ queryOptions: { filter: "TableName ge 'difftab' and TableName lt 'difftac'" } }))).map((x) => x.name).sort()],
    ["table name in another case", () => t("DiffTab").getEntity("pk", "none"), { tolerate: "tableNameCase" }],
    ["insert every type", async () => {
      etags.all = etags.created = (await t(T).createEntity(typed)).etag;
      return null;
    }],
    ["get every type", () => get("pk", "all"), { fixAzurite: wholeDouble }],
    ["get with select", async () => entity(await t(T).getEntity("pk", "all", { disableTypeConversion: true, queryOptions: { select: ["i64", "dt", "missing"] } }))],
    ["duplicate insert", () => t(T).createEntity({ partitionKey: "pk", rowKey: "all" })],
    ["replace with a stale etag", () => t(T).updateEntity({ partitionKey: "pk", rowKey: "all", x: 1 }, "Replace", { etag: 'W/"datetime\'2000-01-01T00%3A00%3A00.0000000Z\'"' })],
    ["merge with the current etag", async () => {
      const r = await t(T).updateEntity({ partitionKey: "pk", rowKey: "all", added: "yes", i32: 18 }, "Merge", { etag: etags.all });
      assert.notEqual(r.etag, etags.all, "a merge kept the etag");
      etags.all = r.etag;
      return get("pk", "all");
    }, { fixAzurite: wholeDouble }],
    ["merge with the old etag", () => t(T).updateEntity({ partitionKey: "pk", rowKey: "all", x: 1 }, "Merge", { etag: etags.created })],
    ["replace with the current etag", async () => {
      await t(T).updateEntity({ partitionKey: "pk", rowKey: "all", only: { value: "5", type: "Int64" } }, "Replace", { etag: etags.all });
      return get("pk", "all");
    }],
    ["merge a missing entity", () => t(T).updateEntity({ partitionKey: "pk", rowKey: "none", a: 1 }, "Merge")],
    ["replace a missing entity", () => t(T).updateEntity({ partitionKey: "pk", rowKey: "none", a: 1 }, "Replace")],
    ["upsert merge (insert)", async () => (await t(T).upsertEntity({ partitionKey: "pk", rowKey: "u", a: 1, b: "two" }, "Merge"), get("pk", "u"))],
    ["upsert merge (merge)", async () => (await t(T).upsertEntity({ partitionKey: "pk", rowKey: "u", c: 3.5 }, "Merge"), get("pk", "u"))],
    ["upsert replace", async () => (await t(T).upsertEntity({ partitionKey: "pk", rowKey: "u", z: false }, "Replace"), get("pk", "u"))],
    ["delete with a stale etag", () => t(T).deleteEntity("pk", "u", { etag: 'W/"datetime\'2000-01-01T00%3A00%3A00.0000000Z\'"' })],
    ["delete", () => t(T).deleteEntity("pk", "u")],
    ["delete it again", () => t(T).deleteEntity("pk", "u")],
    ["get a missing entity", () => get("pk", "u")],
    ["get from a missing table", () => get("pk", "u", "nosuchtable")],
    ["insert into a missing table", () => t("nosuchtable").createEntity({ partitionKey: "a", rowKey: "b" })],
    ["query a missing table", () => list(t("nosuchtable"), {})],
    ["empty keys", async () => (await t(T).createEntity({ partitionKey: "", rowKey: "", v: 1 }), get("", "")), { tolerate: "emptyKeys" }],
    // Keys may not hold / \\ # ? or control characters
    // (understanding-the-table-service-data-model). The service's code for
    // them is InvalidInput, as Azurite's: Azure/azure-storage-net#386 shows
    // "ErrorCode:InvalidInput" from the service for a '/' in a RowKey.
    ...["a/b", "a\\b", "a#b", "a?b", "a\u0001b", "a\u007fb"].flatMap((k) => [
      [`PartitionKey ${JSON.stringify(k)}`, () => t(T).createEntity({ partitionKey: k, rowKey: "r" })],
      [`RowKey ${JSON.stringify(k)}`, () => t(T).createEntity({ partitionKey: "p", rowKey: k })],
    ]),
    ["RowKey of 300 bytes", () => t(T).createEntity({ partitionKey: "long", rowKey: big(300) }), { tolerate: "rowKeyLength" }],
    ["RowKey of 1025 bytes", () => t(T).createEntity({ partitionKey: "long", rowKey: big(1025) }), { statusOnly: "neither the documentation nor an SDK test names the service's code for a key over 1 KiB; Azurite says InvalidInput" }],
    ["property name with a dash", () => t(T).createEntity({ partitionKey: "p", rowKey: "dash", "a-b": 1 }), { service: { status: 400, code: "PropertyNameInvalid" }, why: names }],
    ["property name starting with a digit", () => t(T).createEntity({ partitionKey: "p", rowKey: "digit", "1a": 1 }), { service: { status: 400, code: "PropertyNameInvalid" }, why: names }],
    ["property name of 256 characters", () => t(T).createEntity({ partitionKey: "p", rowKey: "longname", [big(256)]: 1 }), { service: { status: 400, code: "PropertyNameTooLong" }, why: names }],
    ["252 properties", async () => {
      const e = { partitionKey: "p", rowKey: "wide" };
      for (let i = 0; i < 252; i++) e[`p${i}`] = i;
      await t(T).createEntity(e);
      return Object.keys(await get("p", "wide")).length;
    }],
    ["253 properties", () => {
      const e = { partitionKey: "p", rowKey: "wider" };
      for (let i = 0; i < 253; i++) e[`p${i}`] = i;
      return t(T).createEntity(e);
    }, { service: { status: 400, code: "TooManyProperties" }, why: names }],
    ["string of 32768 characters", async () => (await t(T).createEntity({ partitionKey: "p", rowKey: "s32k", s: big(32768) }), (await get("p", "s32k")).s.length)],
    // A string property holds at most 32K UTF-16 characters, a binary
    // 64 KiB (data model page); the service answers PropertyValueTooLarge
    // ("The property value exceeds the maximum allowed size (64KB)...",
    // quoted in Azure/Azurite#2510 from the service). Cosmos DB documents
    // no different limit.
    ["string of 32769 characters", () => t(T).createEntity({ partitionKey: "p", rowKey: "s32k1", s: big(32769) })],
    ["binary of 65537 bytes", () => t(T).createEntity({ partitionKey: "p", rowKey: "bin64k", b: new Uint8Array(65537) })],
    ["entity of 1.2 MB in UTF-16 (600 KB in UTF-8)", () => {
      const e = { partitionKey: "p", rowKey: "huge" };
      for (let i = 0; i < 40; i++) e[`s${i}`] = big(15000);
      return t(T).createEntity(e);
    }, { tolerate: "entitySize" }],
    ["entity of 3 MB in UTF-8", () => {
      const e = { partitionKey: "p", rowKey: "huger" };
      for (let i = 0; i < 200; i++) e[`s${i}`] = big(15000);
      return t(T).createEntity(e);
    }, {
      // Over Storage's 1 MiB and Cosmos DB's 2 MB alike.
      service: { status: 400, code: "EntityTooLarge" },
      why: "Azurite does not check an entity's size; the service allows 1 MiB (understanding-the-table-service-data-model) and names the error EntityTooLarge (table-service-error-codes)",
    }],
    ["Int64 out of range", () => t(T).createEntity({ partitionKey: "p", rowKey: "i64", n: { value: "9223372036854775808", type: "Int64" } }), { service: { status: 400 }, why: values }],
    ["Int32 out of range", () => t(T).createEntity({ partitionKey: "p", rowKey: "i32", n: { value: 2147483648, type: "Int32" } }), { service: { status: 400 }, why: values }],
    ["Guid malformed", () => t(T).createEntity({ partitionKey: "p", rowKey: "guid", n: { value: "not-a-guid", type: "Guid" } }), { service: { status: 400 }, why: values }],
    ["DateTime before 1601", () => t(T).createEntity({ partitionKey: "p", rowKey: "dt", n: { value: "1600-12-31T23:59:59Z", type: "DateTime" } }), { service: { status: 400 }, why: values }],
    ["seed a query set", async () => {
      for (let i = 0; i < 25; i++) {
        await t(T).createEntity({ partitionKey: `q${i % 3}`, rowKey: `r${String(i).padStart(2, "0")}`, n: i, odd: i % 2 === 1, w: { value: String(i * 1e10), type: "Int64" } });
      }
      return null;
    }],
    ["query: filter, select, pages of 4", () => list(t(T), { filter: "n ge 5 and odd eq false and PartitionKey ne 'q1'", select: ["n", "w"] }, 4)],
    ["query: one partition, a row range, pages of 2", () => list(t(T), { filter: "PartitionKey eq 'q2' and RowKey gt 'r05' and RowKey le 'r20'" }, 2)],
    ["query: Int64 comparison", () => list(t(T), { filter: "w gt 200000000000L", select: ["n"] })],
    ["query: Int32 against an Int64 literal", () => list(t(T), { filter: "n eq 3L" }), { service: { ok: [] }, why: "Azurite answers 500; the service: \"The constant value must be of the same data type as the property in order for the filter to return valid results\" (querying-tables-and-entities), so nothing matches" }],
    ["query: a missing property with ne", () => list(t(T), { filter: "PartitionKey eq 'q0' and nothere ne 1" })],
    ["query: not of a missing property", () => list(t(T), { filter: "PartitionKey eq 'q0' and not (nothere eq 1)", select: ["n"] })],
    ["query: false", () => list(t(T), { filter: "false" })],
    ["query: bad filter", () => list(t(T), { filter: "n eq" })],
    ["query: unbalanced parenthesis", () => list(t(T), { filter: "(n eq 1" })],
    ["query: a number alone", () => list(t(T), { filter: "1" })],
    ["query: every type", () => list(t(T), { filter: "PartitionKey eq 'pk'" })],
    ["seed the transaction partition", async () => {
      await t(T).createEntity({ partitionKey: "tx", rowKey: "pre", v: 0 });
      await t(T).createEntity({ partitionKey: "tx", rowKey: "old", v: 0 });
      return null;
    }],
    ["transaction", async () => {
      const r = await t(T).submitTransaction([
        ["create", { partitionKey: "tx", rowKey: "a", v: 1 }],
        ["create", { partitionKey: "tx", rowKey: "b", v: 2 }],
        ["upsert", { partitionKey: "tx", rowKey: "c", v: 3 }, "Merge"],
        ["update", { partitionKey: "tx", rowKey: "pre", w: 9 }, "Merge"],
        ["delete", { partitionKey: "tx", rowKey: "old" }],
      ]);
      return { status: r.status, subs: r.subResponses.map((s) => [s.status, typeof s.etag === "string" && etagForm.test(s.etag)]), rows: await list(t(T), { filter: "PartitionKey eq 'tx'" }) };
    }],
    ["transaction failing at index 2", () =>
      t(T).submitTransaction([
        ["create", { partitionKey: "tx", rowKey: "d" }],
        ["delete", { partitionKey: "tx", rowKey: "b" }],
        ["create", { partitionKey: "tx", rowKey: "a" }],
        ["create", { partitionKey: "tx", rowKey: "e" }],
      ])],
    ["transaction failing at index 1 on If-Match", () =>
      t(T).submitTransaction([
        ["delete", { partitionKey: "tx", rowKey: "b" }],
        ["update", { partitionKey: "tx", rowKey: "a", v: 0 }, "Replace", { etag: 'W/"datetime\'2000-01-01T00%3A00%3A00.0000000Z\'"' }],
      ])],
    ["transaction deleting a missing entity", () => t(T).submitTransaction([["delete", { partitionKey: "tx", rowKey: "zz" }]])],
    ["transaction touching a row twice", () =>
      t(T).submitTransaction([
        ["create", { partitionKey: "tx", rowKey: "f" }],
        ["update", { partitionKey: "tx", rowKey: "f", v: 1 }, "Merge"],
      ])],
    ["transaction of 101 operations", () => t(T).submitTransaction(Array.from({ length: 101 }, (_, i) => ["create", { partitionKey: "tx", rowKey: `m${i}` }]))],
    ["transaction of 2.5 MB", async () =>
      (await t(T).submitTransaction(
        Array.from({ length: 5 }, (_, i) => {
          const e = { partitionKey: "txbig", rowKey: `b${i}` };
          for (let j = 0; j < 4; j++) e[`s${j}`] = big(30000);
          return ["create", e];
        }),
      )).subResponses.map((r) => r.status), { tolerate: "batchSize" }],
    ["transaction leaves its partition unchanged", () => list(t(T), { filter: "PartitionKey eq 'tx'" })],
    ["SAS: insert inside its range", () => tableSas(T, { add: true, query: true }, "m", "p").createEntity({ partitionKey: "n", rowKey: "1" })],
    ["SAS: insert outside its range", () => tableSas(T, { add: true, query: true }, "m", "p").createEntity({ partitionKey: "q", rowKey: "1" }), { service: { status: 403 }, why: sasRange }],
    ["SAS: read outside its range", () => tableSas(T, { add: true, query: true }, "m", "p").getEntity("pk", "all", { disableTypeConversion: true }).then(entity), { service: { status: 403 }, why: sasRange }],
    ["SAS: query clipped to its range", async () => (await collect(tableSas(T, { query: true }, "n", "n").listEntities())).map((e) => e.partitionKey), { service: { ok: ["n"] }, why: sasRange }],
    ["SAS: delete without permission", () => tableSas(T, { query: true }).deleteEntity("n", "1")],
    ["SAS: another table's token", () => tableSas("difftab2", { query: true }, undefined, undefined, T).getEntity("n", "1", { disableTypeConversion: true }).then(entity)],
    ["delete the second table", () => status((o) => svc.deleteTable("difftab2", o))],
    ["delete it again", () => status((o) => svc.deleteTable("difftab2", o))],
    ["list tables after delete", async () => (await collect(svc.listTables({ queryOptions: { filter: "TableName ge 'difftab' and TableName lt 'difftac'" } }))).map((x) => x.name).sort()],
  ];
}

function context(label, url, account, key) {
  const cred = new AzureNamedKeyCredential(account, key);
  return {
    label,
    svc: new TableServiceClient(url, cred, clientOptions()),
    t: (name) => new TableClient(url, name, cred, clientOptions()),
    // A client of table `on` (default: name) holding a SAS signed for name.
    tableSas: (name, permissions, startPartitionKey, endPartitionKey, on = name) =>
      new TableClient(
        url,
        on,
        new AzureSASCredential(generateTableSas(name, cred, { expiresOn: new Date(Date.now() + 3600e3), permissions, startPartitionKey, endPartitionKey })),
        clientOptions(),
      ),
  };
}

async function run(ctx) {
  const out = [];
  for (const [name, fn, opts] of steps(ctx)) {
    // TABLES_DIFF_TRACE=1 prints each step and its outcome as it runs.
    if (process.env.TABLES_DIFF_TRACE) process.stderr.write(`${ctx.label}: ${name}`);
    out.push({ name, opts, result: await outcome(fn) });
    if (process.env.TABLES_DIFF_TRACE) process.stderr.write(` -> ${JSON.stringify(out.at(-1).result).slice(0, 300)}\n`);
  }
  return out;
}

let azuriteRun;
for (const [i, style] of styles.entries()) {
  test(`Parsec ${style.name} answers the sequence as Azurite does, but for documented differences`, async () => {
    azuriteRun ??= run(context("Azurite", `http://127.0.0.1:${azurite.port}/${azuriteAccount}`, azuriteAccount, azuriteKey));
    const want = await azuriteRun;
    const got = await run(context(`Parsec ${style.name}`, style.url(parsec[i].port), style.account, emulatorKey));
    const diffs = [];
    for (const [k, w] of want.entries()) {
      const g = got[k];
      const o = w.opts ?? {};
      let expected = w.result;
      let actual = g.result;
      if (o.fixAzurite) expected = o.fixAzurite(structuredClone(expected));
      if (o.service) {
        // Only the fields the documented outcome names.
        expected = o.service;
        actual = "ok" in o.service ? { ok: actual.ok } : { status: actual.error?.status, ...("code" in o.service && { code: actual.error?.code }) };
      } else if (o.statusOnly) {
        expected = { status: expected.error?.status };
        actual = { status: actual.error?.status };
      }
      if (isDeepStrictEqual(actual, expected)) continue;
      if (o.tolerate && tolerated[o.tolerate](w.result, g.result)) continue;
      diffs.push(
        `step ${k} "${w.name}":\n  expected: ${JSON.stringify(expected)}${o.service ? " (documented; Azurite: " + JSON.stringify(w.result) + ")" : ""}\n  Parsec:   ${JSON.stringify(g.result)}`,
      );
    }
    assert.equal(diffs.length, 0, `${diffs.length} differences from Azurite:\n` + diffs.join("\n"));
  });
}
