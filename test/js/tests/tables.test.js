// The Azure Table API through @azure/data-tables 13.3.2: every operation the
// SDK offers, in both URL styles (host-style localhost, which the SDK treats
// as Cosmos DB and sends MERGE as POST + X-HTTP-Method; path-style
// 127.0.0.1/devstoreaccount1, which it treats as Storage and sends PATCH),
// signed with SharedKey and with SAS tokens from generateAccountSas and
// generateTableSas; the read-only key, and SAS scopes.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  TableServiceClient,
  TableClient,
  AzureNamedKeyCredential,
  AzureSASCredential,
  generateTableSas,
  generateAccountSas,
  odata,
} from "@azure/data-tables";
import { startParsecTables, styles, clientOptions, emulatorKey, readOnlyKey, fails, collect } from "./tables-common.js";

let server;
before(async () => {
  server = await startParsecTables(["--read-only-key", readOnlyKey]);
});
after(async () => {
  await server?.stop();
});

// Credentials: SharedKey for everything, or an account SAS (tables) and a
// table SAS (entities) signed with the same key.
const credentials = [
  {
    name: "SharedKey",
    clients(url, account, seen) {
      const cred = new AzureNamedKeyCredential(account, emulatorKey);
      return {
        service: new TableServiceClient(url, cred, clientOptions(seen)),
        table: (name) => new TableClient(url, name, cred, clientOptions(seen)),
        admin: (name) => new TableClient(url, name, cred, clientOptions(seen)),
      };
    },
  },
  {
    name: "SAS",
    clients(url, account, seen) {
      const cred = new AzureNamedKeyCredential(account, emulatorKey);
      const expiresOn = new Date(Date.now() + 3600e3);
      const accountSas = generateAccountSas(cred, {
        expiresOn,
        resourceTypes: "sco",
        permissions: { query: true, write: true, delete: true, list: true, add: true, update: true },
      });
      return {
        service: new TableServiceClient(url, new AzureSASCredential(accountSas), clientOptions(seen)),
        table: (name) =>
          new TableClient(
            url,
            name,
            new AzureSASCredential(generateTableSas(name, cred, { expiresOn, permissions: { query: true, add: true, update: true, delete: true } })),
            clientOptions(seen),
          ),
        // A table SAS cannot create or delete its table (Storage: "Create
        // Table" and "Delete Table" need an account SAS), so that goes
        // through a table client signed with the account SAS.
        admin: (name) => new TableClient(url, name, new AzureSASCredential(accountSas), clientOptions(seen)),
      };
    },
  },
];

const bytes = (u) => Array.from(u);

styles.forEach((style, si) => {
  credentials.forEach((credential, ci) => {
    describe(`${style.name}, ${credential.name}`, () => {
      // Table names are unique per combination: all share one server.
      const prefix = `s${si}c${ci}`;
      let c;
      let seen;
      before(() => {
        seen = [];
        c = credential.clients(style.url(server.port), style.account, seen);
      });

      test("tables: create, list with paging and a filter, delete", async () => {
        const names = [];
        for (let i = 0; i < 5; i++) names.push(`${prefix}tab${i}`);
        for (const n of names) await c.service.createTable(n);
        // createTable of an existing table is not an error for the SDK (it
        // swallows TableAlreadyExists), but the table is not duplicated.
        await c.service.createTable(names[0]);
        const filter = odata`TableName ge ${prefix + "tab"} and TableName lt ${prefix + "tac"}`;
        const pages = await collect(c.service.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 2 }));
        assert.ok(pages.length >= 3, `5 tables in pages of 2 took ${pages.length} pages`);
        for (const p of pages) assert.ok(p.length <= 2, `a page of ${p.length} tables`);
        assert.deepEqual(pages.flat().map((t) => t.name).sort(), names);
        const all = (await collect(c.service.listTables())).map((t) => t.name);
        for (const n of names) assert.ok(all.includes(n), `${n} missing from an unfiltered list`);
        await c.service.deleteTable(names[4]);
        await c.admin(names[3]).deleteTable();
        const left = (await collect(c.service.listTables({ queryOptions: { filter } }))).map((t) => t.name).sort();
        assert.deepEqual(left, names.slice(0, 3));
        // An entity in a deleted table: TableNotFound.
        const e = await fails(c.table(names[4]).createEntity({ partitionKey: "p", rowKey: "r" }));
        assert.equal(e.status, 404);
        assert.equal(e.odataCode, "TableNotFound");
      });

      test("entities: create, get, Replace and Merge updates, upserts, delete, with etags", async () => {
        const name = `${prefix}ents`;
        const t = c.table(name);
        await c.admin(name).createTable();
        const created = await t.createEntity({ partitionKey: "p1", rowKey: "r1", a: "one", b: 2 });
        assert.ok(created.etag, "createEntity returned no etag");
        const dup = await fails(t.createEntity({ partitionKey: "p1", rowKey: "r1" }));
        assert.equal(dup.status, 409);
        assert.equal(dup.odataCode, "EntityAlreadyExists");

        let got = await t.getEntity("p1", "r1");
        assert.equal(got.a, "one");
        assert.equal(got.b, 2);
        assert.equal(got.etag, created.etag);
        assert.ok(got.timestamp, "no timestamp");

        // Merge keeps a, adds c; Replace drops what it does not name.
        seen.length = 0;
        const merged = await t.updateEntity({ partitionKey: "p1", rowKey: "r1", c: true }, "Merge", { etag: got.etag });
        assert.deepEqual(seen, [style.cosmos ? "POST+MERGE" : "PATCH"], "the SDK did not take the URL as " + (style.cosmos ? "Cosmos" : "Storage"));
        assert.notEqual(merged.etag, got.etag);
        got = await t.getEntity("p1", "r1");
        assert.deepEqual([got.a, got.b, got.c], ["one", 2, true]);
        // The old etag no longer matches.
        const stale = await fails(t.updateEntity({ partitionKey: "p1", rowKey: "r1", x: 1 }, "Replace", { etag: created.etag }));
        assert.equal(stale.status, 412);
        assert.equal(stale.odataCode, "UpdateConditionNotSatisfied");
        const staleMerge = await fails(t.updateEntity({ partitionKey: "p1", rowKey: "r1", x: 1 }, "Merge", { etag: created.etag }));
        assert.equal(staleMerge.status, 412);
        await t.updateEntity({ partitionKey: "p1", rowKey: "r1", d: "only" }, "Replace", { etag: merged.etag });
        got = await t.getEntity("p1", "r1");
        assert.equal(got.d, "only");
        assert.equal(got.a, undefined);
        assert.equal(got.c, undefined);
        // Updates without an etag send If-Match: *; on a missing entity they fail.
        const missing = await fails(t.updateEntity({ partitionKey: "p1", rowKey: "nope", a: 1 }, "Merge"));
        assert.equal(missing.status, 404);
        assert.equal(missing.odataCode, "ResourceNotFound");

        // Upserts create, then merge or replace.
        await t.upsertEntity({ partitionKey: "p1", rowKey: "u1", a: 1, b: 2 }, "Merge");
        await t.upsertEntity({ partitionKey: "p1", rowKey: "u1", c: 3 }, "Merge");
        got = await t.getEntity("p1", "u1");
        assert.deepEqual([got.a, got.b, got.c], [1, 2, 3]);
        await t.upsertEntity({ partitionKey: "p1", rowKey: "u1", z: "z" }, "Replace");
        got = await t.getEntity("p1", "u1");
        assert.deepEqual([got.a, got.z], [undefined, "z"]);
        await t.upsertEntity({ partitionKey: "p1", rowKey: "u2", n: 5 }, "Replace");
        assert.equal((await t.getEntity("p1", "u2")).n, 5);

        // Delete with a stale etag fails, with the current one succeeds.
        const wrong = await fails(t.deleteEntity("p1", "u1", { etag: created.etag }));
        assert.equal(wrong.status, 412);
        assert.equal(wrong.odataCode, "UpdateConditionNotSatisfied");
        await t.deleteEntity("p1", "u1", { etag: got.etag });
        const gone = await fails(t.getEntity("p1", "u1"));
        assert.equal(gone.status, 404);
        assert.equal(gone.odataCode, "ResourceNotFound");
        const again = await fails(t.deleteEntity("p1", "u1"));
        assert.equal(again.status, 404);
        // getEntity with select.
        const sel = await t.getEntity("p1", "u2", { queryOptions: { select: ["n"] } });
        assert.equal(sel.n, 5);
      });

      test("every EDM type round-trips", async () => {
        const name = `${prefix}edm`;
        const t = c.table(name);
        await c.admin(name).createTable();
        const when = new Date("2024-02-29T12:34:56.789Z");
        const entity = {
          partitionKey: "edm",
          rowKey: "all",
          str: "héllo ✓ 𝄞 'quoted'",
          i32: 2147483647,
          i32neg: -2147483648,
          i64: { value: "9007199254740993", type: "Int64" },
          i64neg: { value: "-9223372036854775808", type: "Int64" },
          bigint: 123456789012345678n,
          dbl: 3.25,
          dblWhole: { value: "5", type: "Double" },
          nan: { value: "NaN", type: "Double" },
          inf: { value: "Infinity", type: "Double" },
          ninf: { value: "-Infinity", type: "Double" },
          yes: true,
          no: false,
          dt: when,
          dt7: { value: "2024-02-29T12:34:56.1234567Z", type: "DateTime" },
          guid: { value: "0f8fad5b-d9cb-469f-a165-70867728950e", type: "Guid" },
          bin: new Uint8Array([0, 1, 2, 127, 128, 255]),
          empty: "",
        };
        await t.createEntity(entity);
        const got = await t.getEntity("edm", "all");
        assert.equal(got.str, entity.str);
        assert.equal(got.i32, 2147483647);
        assert.equal(got.i32neg, -2147483648);
        assert.equal(got.i64, 9007199254740993n);
        assert.equal(got.i64neg, -9223372036854775808n);
        assert.equal(got.bigint, 123456789012345678n);
        assert.equal(got.dbl, 3.25);
        assert.equal(Number(got.dblWhole), 5);
        assert.equal(got.nan, "NaN");
        assert.equal(got.inf, "Infinity");
        assert.equal(got.ninf, "-Infinity");
        assert.equal(got.yes, true);
        assert.equal(got.no, false);
        assert.ok(got.dt instanceof Date);
        assert.equal(got.dt.toISOString(), when.toISOString());
        assert.deepEqual(got.guid, entity.guid);
        assert.ok(got.bin instanceof Uint8Array);
        assert.deepEqual(bytes(got.bin), bytes(entity.bin));
        assert.equal(got.empty, "");

        // The types as the service annotates them.
        const raw = await t.getEntity("edm", "all", { disableTypeConversion: true });
        const types = Object.fromEntries(
          Object.entries(raw)
            .filter(([k]) => !["partitionKey", "rowKey", "etag", "timestamp", "odata.metadata"].includes(k))
            .map(([k, v]) => [k, v.type]),
        );
        assert.deepEqual(types, {
          str: "String",
          i32: "Int32",
          i32neg: "Int32",
          i64: "Int64",
          i64neg: "Int64",
          bigint: "Int64",
          dbl: "Double",
          dblWhole: "Double",
          nan: "Double",
          inf: "Double",
          ninf: "Double",
          yes: "Boolean",
          no: "Boolean",
          dt: "DateTime",
          dt7: "DateTime",
          guid: "Guid",
          bin: "Binary",
          empty: "String",
        });
        assert.equal(raw.i64.value, "9007199254740993");
        assert.equal(raw.dt7.value, "2024-02-29T12:34:56.1234567Z");
        assert.equal(raw.bin.value, Buffer.from(entity.bin).toString("base64"));

        // Each typed value is found by a filter of its own type, and a
        // literal of another type matches nothing.
        const q = async (filter) =>
          (await collect(t.listEntities({ queryOptions: { filter } }))).map((e) => e.rowKey);
        assert.deepEqual(await q("i64 eq 9007199254740993L"), ["all"]);
        assert.deepEqual(await q("i32 eq 2147483647"), ["all"]);
        assert.deepEqual(await q("i32 eq 2147483647L"), []);
        assert.deepEqual(await q("dblWhole eq 5.0"), ["all"]);
        assert.deepEqual(await q("dbl gt 3.0 and dbl lt 3.5"), ["all"]);
        assert.deepEqual(await q("dt eq datetime'2024-02-29T12:34:56.789Z'"), ["all"]);
        assert.deepEqual(await q("dt7 gt datetime'2024-02-29T12:34:56.1234566Z'"), ["all"]);
        assert.deepEqual(await q("guid eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'"), ["all"]);
        assert.deepEqual(await q("bin eq X'0001027f80ff'"), ["all"]);
        assert.deepEqual(await q("yes and not no"), ["all"]);
        assert.deepEqual(await q(odata`str eq ${entity.str}`), ["all"]);
      });

      test("listEntities: filter, select and pages of maxPageSize", async () => {
        const name = `${prefix}query`;
        const t = c.table(name);
        await c.admin(name).createTable();
        const want = [];
        for (let i = 0; i < 30; i++) {
          const e = { partitionKey: `pk${i % 3}`, rowKey: `r${String(i).padStart(2, "0")}`, n: i, tag: i % 2 ? "odd" : "even", extra: "x" };
          await t.createEntity(e);
          if (e.n >= 5 && e.tag === "even") want.push(e);
        }
        const pages = await collect(
          t.listEntities({ queryOptions: { filter: odata`n ge ${5} and tag eq ${"even"}`, select: ["n", "tag"] } }).byPage({ maxPageSize: 4 }),
        );
        assert.ok(pages.length >= 4, `${want.length} entities in pages of 4 took ${pages.length} pages`);
        for (const p of pages) assert.ok(p.length <= 4, `a page of ${p.length}`);
        const got = pages.flat();
        // Only the selected properties come back (and the etag).
        for (const e of got) assert.deepEqual(Object.keys(e).filter((k) => k !== "etag").sort(), ["n", "tag"]);
        assert.deepEqual(got.map((e) => e.n).sort((a, b) => a - b), want.map((e) => e.n));
        // One partition, with a key range, continued page by page.
        const one = (
          await collect(t.listEntities({ queryOptions: { filter: "PartitionKey eq 'pk1' and RowKey ge 'r10'" } }).byPage({ maxPageSize: 2 }))
        ).flat();
        const wantOne = [];
        for (let i = 0; i < 30; i++) if (i % 3 === 1 && i >= 10) wantOne.push(`r${i}`);
        assert.deepEqual(one.map((e) => e.rowKey).sort(), wantOne);
        // Everything, unfiltered.
        assert.equal((await collect(t.listEntities())).length, 30);
        // A bad filter is a 400.
        const bad = await fails(collect(t.listEntities({ queryOptions: { filter: "n eq" } })));
        assert.equal(bad.status, 400);
      });

      test("submitTransaction: success, and failure at index k names k and changes nothing", async () => {
        const name = `${prefix}batch`;
        const t = c.table(name);
        await c.admin(name).createTable();
        await t.createEntity({ partitionKey: "b", rowKey: "keep", v: 1 });
        await t.createEntity({ partitionKey: "b", rowKey: "gone", v: 1 });
        const ok = await t.submitTransaction([
          ["create", { partitionKey: "b", rowKey: "n1", v: 1 }],
          ["create", { partitionKey: "b", rowKey: "n2", v: 2 }],
          ["update", { partitionKey: "b", rowKey: "keep", w: 2 }, "Merge"],
          ["upsert", { partitionKey: "b", rowKey: "n3", v: 3 }, "Replace"],
          ["delete", { partitionKey: "b", rowKey: "gone" }],
        ]);
        assert.equal(ok.status, 202);
        // The SDK creates with "Prefer: return-no-content", so a create is a 204 too.
        assert.deepEqual(ok.subResponses.map((r) => r.status), [204, 204, 204, 204, 204]);
        assert.ok(ok.subResponses[0].etag, "a created entity's sub-response has no etag");
        const rows = (await collect(t.listEntities({ queryOptions: { filter: "PartitionKey eq 'b'" } }))).map((e) => e.rowKey).sort();
        assert.deepEqual(rows, ["keep", "n1", "n2", "n3"]);
        const keep = await t.getEntity("b", "keep");
        assert.deepEqual([keep.v, keep.w], [1, 2]);

        // Each failing action reports its own index; nothing is written.
        for (const k of [0, 2, 3]) {
          const actions = [
            ["create", { partitionKey: "b", rowKey: `x${k}a` }],
            ["create", { partitionKey: "b", rowKey: `x${k}b` }],
            ["upsert", { partitionKey: "b", rowKey: `x${k}c` }],
            ["create", { partitionKey: "b", rowKey: `x${k}d` }],
          ];
          actions[k] = ["create", { partitionKey: "b", rowKey: "n1" }];
          const e = await fails(t.submitTransaction(actions));
          assert.equal(e.status, 409, JSON.stringify(e));
          assert.equal(e.odataCode, "EntityAlreadyExists");
          assert.match(e.message, new RegExp(`^${k}:`), `the failure at ${k} reported as: ${e.message}`);
        }
        const ifMatch = await fails(
          t.submitTransaction([
            ["create", { partitionKey: "b", rowKey: "y1" }],
            ["update", { partitionKey: "b", rowKey: "keep", v: 9 }, "Replace", { etag: ok.subResponses[0].etag }],
          ]),
        );
        assert.equal(ifMatch.status, 412);
        assert.equal(ifMatch.odataCode, "UpdateConditionNotSatisfied");
        assert.match(ifMatch.message, /^1:/);
        const after = (await collect(t.listEntities({ queryOptions: { filter: "PartitionKey eq 'b'" } }))).map((e) => e.rowKey).sort();
        assert.deepEqual(after, ["keep", "n1", "n2", "n3"]);
        assert.equal((await t.getEntity("b", "keep")).v, 1);
        // Two partitions in one transaction are refused by the SDK itself
        // before anything is sent, so they are not a server test.
      });
    });
  });
});

describe("keys and scopes", () => {
  styles.forEach((style, si) => {
    test(`${style.name}: the read-only key reads but cannot write`, async () => {
      const url = style.url(server.port);
      const full = new TableClient(url, `ro${si}table`, new AzureNamedKeyCredential(style.account, emulatorKey), clientOptions());
      await full.createTable();
      await full.createEntity({ partitionKey: "p", rowKey: "r", v: 1 });
      const roCred = new AzureNamedKeyCredential(style.account, readOnlyKey);
      const ro = new TableClient(url, `ro${si}table`, roCred, clientOptions());
      assert.equal((await ro.getEntity("p", "r")).v, 1);
      assert.equal((await collect(ro.listEntities())).length, 1);
      for (const write of [
        () => ro.createEntity({ partitionKey: "p", rowKey: "w" }),
        () => ro.updateEntity({ partitionKey: "p", rowKey: "r", v: 2 }, "Merge"),
        () => ro.upsertEntity({ partitionKey: "p", rowKey: "r", v: 2 }, "Replace"),
        () => ro.deleteEntity("p", "r"),
        () => ro.submitTransaction([["create", { partitionKey: "p", rowKey: "w" }]]),
        () => new TableServiceClient(url, roCred, clientOptions()).createTable(`ro${si}other`),
      ]) {
        const e = await fails(write());
        assert.equal(e.status, 403, JSON.stringify(e));
      }
      assert.equal((await full.getEntity("p", "r")).v, 1);
      assert.equal((await collect(full.listEntities())).length, 1);
    });

    test(`${style.name}: a table SAS is held to its partition range and permissions`, async () => {
      const url = style.url(server.port);
      const name = `sas${si}scope`;
      const cred = new AzureNamedKeyCredential(style.account, emulatorKey);
      const full = new TableClient(url, name, cred, clientOptions());
      await full.createTable();
      await full.createEntity({ partitionKey: "a", rowKey: "1" });
      await full.createEntity({ partitionKey: "z", rowKey: "1" });
      const sas = generateTableSas(name, cred, {
        expiresOn: new Date(Date.now() + 3600e3),
        permissions: { query: true, add: true, update: true },
        startPartitionKey: "m",
        endPartitionKey: "p",
      });
      const t = new TableClient(url, name, new AzureSASCredential(sas), clientOptions());
      await t.createEntity({ partitionKey: "n", rowKey: "1" });
      await t.upsertEntity({ partitionKey: "n", rowKey: "1", v: 2 }, "Merge");
      assert.equal((await t.getEntity("n", "1")).v, 2);
      for (const [what, call] of [
        ["insert below the range", () => t.createEntity({ partitionKey: "a", rowKey: "2" })],
        ["insert above the range", () => t.createEntity({ partitionKey: "q", rowKey: "2" })],
        ["read outside the range", () => t.getEntity("z", "1")],
        ["delete without d", () => t.deleteEntity("n", "1")],
      ]) {
        const e = await fails(call());
        assert.equal(e.status, 403, `${what}: ${JSON.stringify(e)}`);
      }
      // A query returns only what is inside the range.
      const seen = (await collect(t.listEntities())).map((e) => e.partitionKey);
      assert.deepEqual(seen, ["n"]);
      // A token for another table does not open this one.
      const other = generateTableSas("sasother", cred, { expiresOn: new Date(Date.now() + 3600e3), permissions: { query: true } });
      const e = await fails(new TableClient(url, name, new AzureSASCredential(other), clientOptions()).getEntity("n", "1"));
      assert.equal(e.status, 403);
      // A tampered signature fails.
      const bad = sas.replace(/sig=[^&]+/, "sig=" + encodeURIComponent(Buffer.alloc(32).toString("base64")));
      const e2 = await fails(new TableClient(url, name, new AzureSASCredential(bad), clientOptions()).getEntity("n", "1"));
      assert.equal(e2.status, 403);
      assert.equal(e2.odataCode, "AuthenticationFailed");
    });
  });
});
