// Parsec Explorer: sign-in, the database tree and a container's views.
// Every call goes through api.js, signed with the account key.
import { CosmosError, emulatorKey, partitionKeyOf, request, resume, signIn, signOut } from "./api.js";
import { renderPartitions } from "./partitions.js";
import { el, clear, confirmButton, fmt, jsonText } from "./dom.js";

const $ = (id) => document.getElementById(id);

// The open container and the view shown for it.
const state = { db: null, coll: null, container: null, tab: "items", stop: null };

// ---- messages ----------------------------------------------------------

export function showError(e) {
  const box = $("error");
  box.textContent = e instanceof CosmosError ? e.describe() : String((e && e.message) || e);
  box.hidden = false;
}

function clearError() {
  $("error").hidden = true;
  $("error").textContent = "";
}

function status(msg) {
  $("status").textContent = msg;
}

// guard runs an action, showing its error instead of throwing it.
async function guard(fn) {
  clearError();
  try {
    return await fn();
  } catch (e) {
    showError(e);
    return undefined;
  }
}

// ---- theme -------------------------------------------------------------

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  $("theme").textContent = theme === "dark" ? "Light theme" : "Dark theme";
}

function initTheme() {
  const saved = localStorage.getItem("parsec.explorer.theme");
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  applyTheme(saved || (dark ? "dark" : "light"));
  $("theme").addEventListener("click", () => {
    const next = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
    localStorage.setItem("parsec.explorer.theme", next);
    applyTheme(next);
  });
}

// ---- sign-in -----------------------------------------------------------

function showSignIn() {
  $("main-view").hidden = true;
  $("signout").hidden = true;
  $("signin-view").hidden = false;
  if (document.documentElement.dataset.emulatorKey === "true") {
    $("signin-key").value = emulatorKey;
    $("signin-hint").hidden = false;
  }
  $("signin-key").focus();
}

function showMain(account) {
  $("signin-view").hidden = true;
  $("main-view").hidden = false;
  $("signout").hidden = false;
  $("endpoint").textContent = `${location.host}${account && account.id ? " · account " + account.id : ""}`;
  loadTree();
}

async function boot() {
  initTheme();
  $("signin-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const account = await guard(() => signIn($("signin-key").value));
    if (account) showMain(account);
  });
  $("signout").addEventListener("click", () => {
    stopView();
    signOut();
    state.db = state.coll = state.container = null;
    showSignIn();
  });
  $("refresh-tree").addEventListener("click", () => loadTree());
  $("new-db").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const id = $("new-db-id").value.trim();
    const rus = $("new-db-rus").value.trim();
    const headers = rus ? { "x-ms-offer-throughput": rus } : {};
    const ok = await guard(() => request("POST", ["dbs"], { body: { id }, headers }));
    if (ok) {
      $("new-db-id").value = "";
      $("new-db-rus").value = "";
      status(`created database ${id}`);
      await loadTree(id);
    }
  });
  const account = await resume();
  if (account) showMain(account);
  else showSignIn();
}

// ---- the tree ----------------------------------------------------------

const expanded = new Set();

async function loadTree(open) {
  if (open) expanded.add(open);
  const res = await guard(() => request("GET", ["dbs"]));
  if (!res) return;
  const tree = clear($("tree"));
  const dbs = (res.body.Databases || []).map((d) => d.id).sort();
  if (dbs.length === 0) tree.append(el("li", { class: "muted" }, "no databases yet"));
  for (const db of dbs) tree.append(await dbNode(db));
}

async function dbNode(db) {
  const li = el("li", { "data-db": db });
  const isOpen = expanded.has(db);
  const toggle = el("button", { type: "button", class: "name", "aria-expanded": String(isOpen) }, `${isOpen ? "▾" : "▸"} ${db}`);
  toggle.addEventListener("click", () => {
    if (expanded.has(db)) expanded.delete(db);
    else expanded.add(db);
    loadTree();
  });
  const del = confirmButton(`Delete`, `Delete database ${db}?`, async () => {
    const ok = await guard(() => request("DELETE", ["dbs", db]));
    if (ok) {
      status(`deleted database ${db}`);
      if (state.db === db) closeContainer();
      expanded.delete(db);
      loadTree();
    }
  });
  li.append(el("div", { class: "node" }, toggle, del));
  if (!isOpen) return li;
  const sub = el("ul");
  const res = await guard(() => request("GET", ["dbs", db, "colls"]));
  const colls = res ? (res.body.DocumentCollections || []).map((c) => c.id).sort() : [];
  for (const coll of colls) {
    const open = el("button", { type: "button", class: "name", "aria-current": String(state.db === db && state.coll === coll) }, coll);
    open.addEventListener("click", () => openContainer(db, coll));
    sub.append(el("li", { "data-coll": coll }, el("div", { class: "node" }, open)));
  }
  sub.append(el("li", {}, newContainerForm(db)));
  li.append(sub);
  return li;
}

function newContainerForm(db) {
  const id = el("input", { id: `new-coll-${db}`, placeholder: "container id", required: "" });
  const pk = el("input", { id: `new-pk-${db}`, placeholder: "/partitionKey", value: "/pk", required: "" });
  const rus = el("input", { id: `new-rus-${db}`, type: "number", min: "400", step: "100", placeholder: "400" });
  const form = el(
    "form",
    { class: "inline-form", "aria-label": `New container in ${db}` },
    el("label", { for: id.id }, "New container"),
    id,
    el("label", { for: pk.id }, "Partition key path(s), comma-separated"),
    pk,
    el("label", { for: rus.id }, "Throughput (RU/s)"),
    rus,
    el("button", { type: "submit" }, "Create container"),
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const paths = pk.value.split(",").map((p) => p.trim()).filter(Boolean);
    const body = { id: id.value.trim(), partitionKey: { paths, kind: paths.length > 1 ? "MultiHash" : "Hash", version: 2 } };
    const headers = rus.value.trim() ? { "x-ms-offer-throughput": rus.value.trim() } : {};
    const ok = await guard(() => request("POST", ["dbs", db, "colls"], { body, headers }));
    if (ok) {
      status(`created container ${db}/${body.id}`);
      await loadTree(db);
      openContainer(db, body.id);
    }
  });
  return form;
}

// ---- a container -------------------------------------------------------

function stopView() {
  if (state.stop) state.stop();
  state.stop = null;
}

function closeContainer() {
  stopView();
  state.db = state.coll = state.container = null;
  clear($("content")).append(el("section", {}, el("h1", {}, "Welcome"), el("p", {}, "Pick a container on the left.")));
}

const tabs = [
  ["items", "Items"],
  ["query", "Query"],
  ["partitions", "Partitions"],
  ["settings", "Settings"],
  ["advice", "Advice"],
];

async function openContainer(db, coll, tab) {
  stopView();
  const res = await guard(() => request("GET", ["dbs", db, "colls", coll]));
  if (!res) return;
  Object.assign(state, { db, coll, container: res.body, tab: tab || (state.coll === coll && state.db === db ? state.tab : "items") });
  for (const b of document.querySelectorAll("#tree button.name[aria-current]")) {
    b.setAttribute("aria-current", String(b.closest("[data-db]").dataset.db === db && b.textContent === coll));
  }
  renderContainer();
}

function renderContainer() {
  stopView();
  const { db, coll, container } = state;
  const content = clear($("content"));
  const bar = el("div", { class: "tabs", role: "toolbar", "aria-label": "Container views" });
  for (const [name, label] of tabs) {
    const b = el("button", { type: "button", "aria-pressed": String(state.tab === name), "data-tab": name }, label);
    b.addEventListener("click", () => {
      state.tab = name;
      renderContainer();
    });
    bar.append(b);
  }
  const view = el("section", { id: `view-${state.tab}` });
  content.append(
    el("h1", {}, `${db} / ${coll}`),
    el("p", { class: "muted" }, `partition key ${(container.partitionKey.paths || []).join(", ")}`),
    bar,
    view,
  );
  const ctx = { db, coll, container, guard, status, showError };
  const views = { items: itemsView, query: queryView, partitions: renderPartitions, settings: settingsView, advice: adviceView };
  state.stop = views[state.tab](view, ctx) || null;
}

// ---- items -------------------------------------------------------------

function itemsView(root, { db, coll, container }) {
  const docsPath = ["dbs", db, "colls", coll, "docs"];
  const filter = el("input", { id: "pk-filter", placeholder: 'e.g. "alice" or 42', class: "mono" });
  const list = el("tbody");
  const more = el("button", { type: "button", hidden: "" }, "Load more");
  const pageCharge = el("span", { class: "muted", id: "items-charge" });
  const editorBox = el("div", { class: "card" });
  let continuation = "";
  let pkHeader = null;

  const load = async (reset) => {
    if (reset) {
      continuation = "";
      clear(list);
      pkHeader = null;
      const f = filter.value.trim();
      if (f !== "") {
        try {
          const v = JSON.parse(f);
          pkHeader = JSON.stringify(Array.isArray(v) ? v : [v]);
        } catch {
          showError(`the partition key filter is not a JSON value (write strings in quotes): ${f}`);
          return;
        }
      }
    }
    const headers = {
      "content-type": "application/query+json",
      "x-ms-documentdb-isquery": "True",
      "x-ms-max-item-count": "50",
    };
    if (pkHeader) headers["x-ms-documentdb-partitionkey"] = pkHeader;
    else headers["x-ms-documentdb-query-enablecrosspartition"] = "True";
    if (continuation) headers["x-ms-continuation"] = continuation;
    const res = await guard(() => request("POST", docsPath, { body: { query: "SELECT * FROM c", parameters: [] }, headers }));
    if (!res) return;
    continuation = res.headers.get("x-ms-continuation") || "";
    more.hidden = !continuation;
    for (const doc of res.body.Documents || []) {
      const pk = partitionKeyOf(doc, container.partitionKey);
      const tr = el("tr", { class: "pick", tabindex: "0", "data-id": doc.id }, el("td", { class: "mono" }, doc.id), el("td", { class: "mono" }, pkText(pk)));
      const open = () => {
        for (const r of list.querySelectorAll("tr[aria-selected]")) r.removeAttribute("aria-selected");
        tr.setAttribute("aria-selected", "true");
        editItem(editorBox, docsPath, container, doc, () => load(true));
      };
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (e) => e.key === "Enter" && open());
      list.append(tr);
    }
    if (!list.children.length) list.append(el("tr", {}, el("td", { colspan: "2", class: "muted" }, "no items")));
    pageCharge.textContent = `last page: ${fmt(res.charge, 2)} RU`;
  };

  const form = el("form", { class: "row", "aria-label": "Filter items" }, el("label", { for: "pk-filter" }, "Partition key"), filter, el("button", { type: "submit" }, "Filter"));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    load(true);
  });
  more.addEventListener("click", () => load(false));
  const create = el("button", { type: "button", id: "new-item" }, "New item");
  create.addEventListener("click", () => editItem(editorBox, docsPath, container, null, () => load(true)));
  const paths = container.partitionKey.paths || [];
  root.append(
    el("div", { class: "row" }, form, create),
    el(
      "div",
      { class: "split" },
      el("div", {}, el("table", { "aria-label": "Items" }, el("thead", {}, el("tr", {}, el("th", {}, "id"), el("th", {}, paths.join(", ")))), list), el("div", { class: "pager" }, more, pageCharge)),
      editorBox,
    ),
  );
  editorBox.append(el("p", { class: "muted" }, "Select an item to edit it, or create a new one."));
  load(true);
}

// pkText shows a partition key's values ({} is a missing value).
function pkText(pk) {
  const show = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0 ? "(none)" : JSON.stringify(v));
  return pk.map(show).join(", ");
}

const systemProps = ["_rid", "_self", "_etag", "_attachments", "_ts"];

// editItem shows an item (or a new one, doc null) in the JSON editor.
function editItem(box, docsPath, container, doc, reload) {
  clear(box);
  const isNew = doc === null;
  let etag = doc ? doc._etag : null;
  const text = el("textarea", { class: "editor", id: "item-editor", spellcheck: "false", "aria-label": "Item JSON" });
  const check = el("div", { id: "item-validity", "aria-live": "polite" });
  const save = el("button", { type: "button", class: "primary", id: "save-item" }, isNew ? "Create" : "Save");
  const newer = el("div", { id: "item-newer" });
  const show = (d) => {
    const body = { ...d };
    for (const p of systemProps) delete body[p];
    text.value = JSON.stringify(body, null, 2);
    validate();
  };
  const validate = () => {
    try {
      const v = JSON.parse(text.value);
      if (v === null || typeof v !== "object" || Array.isArray(v)) throw new Error("an item must be a JSON object");
      if (typeof v.id !== "string" || v.id === "") throw new Error('an item needs a string "id"');
      check.className = "valid";
      check.textContent = "valid JSON";
      save.disabled = false;
      return v;
    } catch (e) {
      check.className = "invalid";
      check.textContent = e.message;
      save.disabled = true;
      return null;
    }
  };
  text.addEventListener("input", validate);
  save.addEventListener("click", async () => {
    const v = validate();
    if (!v) return;
    clear(newer);
    const headers = { "x-ms-documentdb-partitionkey": JSON.stringify(partitionKeyOf(v, container.partitionKey)) };
    try {
      clearError();
      let res;
      if (isNew) {
        res = await request("POST", docsPath, { body: v, headers });
      } else {
        if (v.id !== doc.id) throw new Error(`the id cannot change in an edit (it was ${JSON.stringify(doc.id)}); create a new item instead`);
        res = await request("PUT", [...docsPath, doc.id], { body: v, headers: { ...headers, "if-match": etag } });
      }
      etag = res.body._etag;
      status(`${isNew ? "created" : "saved"} ${v.id}: ${fmt(res.charge, 2)} RU`);
      if (isNew) reload();
      else show(res.body);
    } catch (e) {
      showError(e);
      if (e instanceof CosmosError && e.status === 412 && !isNew) {
        // Someone changed it: show the newer version beside the edit, and
        // keep the 412 in view.
        let cur = null;
        try {
          cur = await request("GET", [...docsPath, doc.id], { headers });
        } catch (e2) {
          showError(e2);
        }
        if (cur) {
          const take = el("button", { type: "button", id: "take-newer" }, "Edit the newer version");
          take.addEventListener("click", () => {
            etag = cur.body._etag;
            show(cur.body);
            clear(newer);
          });
          newer.append(el("h3", {}, "The item changed since you opened it. Its newer version:"), el("pre", { class: "json" }, JSON.stringify(cur.body, null, 2)), take);
        }
      }
    }
  });
  const tools = el("div", { class: "row" }, save);
  if (!isNew) {
    tools.append(
      confirmButton("Delete item", `Delete item ${doc.id}?`, async () => {
        const headers = { "x-ms-documentdb-partitionkey": JSON.stringify(partitionKeyOf(doc, container.partitionKey)) };
        const ok = await guard(() => request("DELETE", [...docsPath, doc.id], { headers }));
        if (ok) {
          status(`deleted ${doc.id}`);
          clear(box).append(el("p", { class: "muted" }, "Deleted."));
          reload();
        }
      }),
    );
  }
  box.append(el("h2", {}, isNew ? "New item" : `Item ${doc.id}`), text, check, tools, newer);
  if (isNew) {
    const paths = container.partitionKey.paths || [];
    const sample = { id: "new-item" };
    for (const p of paths) sample[p.split("/")[1]] = "";
    text.value = JSON.stringify(sample, null, 2);
    validate();
  } else {
    show(doc);
  }
}

// ---- query -------------------------------------------------------------

function queryView(root, { db, coll }) {
  const docsPath = ["dbs", db, "colls", coll, "docs"];
  const text = el("textarea", { class: "query", id: "query-text", spellcheck: "false", "aria-label": "Query" }, "SELECT * FROM c");
  const params = el("textarea", { class: "params", id: "query-params", spellcheck: "false", "aria-label": "Parameters (JSON object)", placeholder: '{"@name": "value"}' });
  const pk = el("input", { id: "query-pk", class: "mono", placeholder: "all partitions" });
  const run = el("button", { type: "button", class: "primary", id: "run-query" }, "Run (Ctrl+Enter)");
  const next = el("button", { type: "button", id: "next-page", hidden: "" }, "Next page");
  const asTable = el("input", { type: "checkbox", id: "as-table" });
  const out = el("div", { id: "query-results" });
  const summary = el("div", { id: "query-summary", "aria-live": "polite" });
  let continuation = "";
  let rows = [];
  let spec = null;

  const render = () => {
    clear(out);
    if (asTable.checked) out.append(table(rows));
    else out.append(el("pre", { class: "json" }, JSON.stringify(rows, null, 2)));
  };
  const exec = async (fresh) => {
    if (fresh) {
      let parameters = [];
      const p = params.value.trim();
      if (p) {
        let obj;
        try {
          obj = JSON.parse(p);
        } catch (e) {
          showError(`the parameters are not valid JSON: ${e.message}`);
          return;
        }
        if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
          showError('the parameters must be a JSON object such as {"@name": "value"}');
          return;
        }
        parameters = Object.entries(obj).map(([name, value]) => ({ name: name.startsWith("@") ? name : "@" + name, value }));
      }
      let pkHeader = null;
      if (pk.value.trim()) {
        try {
          const v = JSON.parse(pk.value.trim());
          pkHeader = JSON.stringify(Array.isArray(v) ? v : [v]);
        } catch {
          showError("the partition key is not a JSON value (write strings in quotes)");
          return;
        }
      }
      spec = { body: { query: text.value, parameters }, pkHeader, page: 0, charge: 0 };
      continuation = "";
      clear(summary);
      clear(out);
      next.hidden = true;
    }
    const headers = {
      "content-type": "application/query+json",
      "x-ms-documentdb-isquery": "True",
      "x-ms-max-item-count": "100",
      "x-ms-documentdb-populatequerymetrics": "True",
      "x-ms-cosmos-populateindexmetrics": "True",
    };
    if (spec.pkHeader) headers["x-ms-documentdb-partitionkey"] = spec.pkHeader;
    else headers["x-ms-documentdb-query-enablecrosspartition"] = "True";
    if (continuation) headers["x-ms-continuation"] = continuation;
    const res = await guard(() => request("POST", docsPath, { body: spec.body, headers }));
    if (!res) return;
    spec.page++;
    spec.charge += res.charge;
    continuation = res.headers.get("x-ms-continuation") || "";
    next.hidden = !continuation;
    rows = res.body.Documents || [];
    render();
    clear(summary).append(
      el(
        "p",
        {},
        el("span", { class: "charge", id: "query-charge" }, `${fmt(res.charge, 2)} RU`),
        ` for page ${spec.page} (${rows.length} results; ${fmt(spec.charge, 2)} RU in all)${continuation ? "; more pages follow" : ""}`,
      ),
      touched(res.headers.get("x-ms-session-token")),
      metrics(res.headers.get("x-ms-documentdb-query-metrics")),
      indexMetrics(res.headers.get("x-ms-cosmos-index-utilization")),
    );
    status(`query page ${spec.page}: ${fmt(res.charge, 2)} RU`);
  };
  run.addEventListener("click", () => exec(true));
  next.addEventListener("click", () => exec(false));
  asTable.addEventListener("change", render);
  text.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      exec(true);
    }
  });
  root.append(
    text,
    el("label", { for: "query-params" }, "Parameters"),
    params,
    el("div", { class: "row" }, el("label", { for: "query-pk" }, "Partition key"), pk, run, next, el("label", { for: "as-table" }, asTable, " show as a table")),
    summary,
    out,
  );
  text.focus();
}

// touched lists the partitions a query page read, from its session token
// (range:lsn pairs).
function touched(token) {
  if (!token) return el("span");
  const ranges = token.split(",").map((t) => t.split(":")[0]);
  return el("p", { id: "query-partitions" }, `partitions read: ${ranges.join(", ")}`);
}

function metrics(header) {
  if (!header) return el("span");
  const box = el("div", { class: "metrics", id: "query-metrics" });
  for (const kv of header.split(";")) {
    const [k, v] = kv.split("=");
    if (k) box.append(el("div", {}, el("span", {}, k), el("span", { class: "mono" }, v)));
  }
  return el("details", { open: "" }, el("summary", {}, "Query metrics"), box);
}

function indexMetrics(header) {
  if (!header) return el("span");
  let u;
  try {
    u = JSON.parse(atob(header));
  } catch {
    return el("span");
  }
  const list = (xs) => (xs && xs.length ? xs.map((x) => x.IndexSpec).join(", ") : "none");
  return el(
    "details",
    { open: "", id: "index-metrics" },
    el("summary", {}, "Index metrics"),
    el("p", {}, `indexes used: ${list(u.UtilizedSingleIndexes)}`),
    el("p", {}, `indexes that could help: ${list(u.PotentialSingleIndexes)}`),
  );
}

// table renders rows as a table: one column per top-level property.
function table(rows) {
  const cols = [];
  for (const r of rows.slice(0, 200)) {
    if (r && typeof r === "object" && !Array.isArray(r)) {
      for (const k of Object.keys(r)) if (!cols.includes(k)) cols.push(k);
    }
  }
  if (cols.length === 0) cols.push("value");
  const body = el("tbody");
  for (const r of rows) {
    const obj = r && typeof r === "object" && !Array.isArray(r) ? r : { value: r };
    body.append(el("tr", {}, ...cols.map((c) => el("td", { class: "mono" }, c in obj ? jsonText(obj[c]) : ""))));
  }
  return el("table", { id: "results-table", "aria-label": "Query results" }, el("thead", {}, el("tr", {}, ...cols.map((c) => el("th", {}, c)))), body);
}

// ---- settings ----------------------------------------------------------

function settingsView(root, { db, coll, container }) {
  const collPath = ["dbs", db, "colls", coll];
  const rus = el("input", { id: "throughput", type: "number", min: "400", step: "100" });
  const saveRUs = el("button", { type: "button", id: "save-throughput" }, "Save throughput");
  const offerInfo = el("p", { class: "muted" });
  const policy = el("textarea", { class: "editor", id: "indexing-policy", spellcheck: "false", "aria-label": "Indexing policy" });
  const policyCheck = el("div", { "aria-live": "polite" });
  const savePolicy = el("button", { type: "button", id: "save-policy" }, "Save indexing policy");
  policy.value = JSON.stringify(container.indexingPolicy || {}, null, 2);
  let offer = null;

  const loadOffer = async () => {
    const res = await guard(() => request("GET", ["offers"]));
    if (!res) return;
    offer = (res.body.Offers || []).find((o) => o.offerResourceId === container._rid) || null;
    if (offer) {
      rus.value = offer.content.offerThroughput;
      offerInfo.textContent = `offer ${offer.id}`;
    } else {
      rus.disabled = saveRUs.disabled = true;
      offerInfo.textContent = "this container shares its database's throughput";
    }
  };
  saveRUs.addEventListener("click", async () => {
    const n = parseInt(rus.value, 10);
    if (!Number.isInteger(n) || n < 400) {
      showError("throughput must be a whole number of RU/s, at least 400");
      return;
    }
    const body = { ...offer, content: { ...offer.content, offerThroughput: n } };
    const res = await guard(() => request("PUT", ["offers", offer.id], { body }));
    if (res) {
      offer = res.body;
      status(`throughput of ${db}/${coll} set to ${fmt(n)} RU/s`);
    }
  });
  policy.addEventListener("input", () => {
    try {
      JSON.parse(policy.value);
      policyCheck.className = "valid";
      policyCheck.textContent = "valid JSON";
      savePolicy.disabled = false;
    } catch (e) {
      policyCheck.className = "invalid";
      policyCheck.textContent = e.message;
      savePolicy.disabled = true;
    }
  });
  savePolicy.addEventListener("click", async () => {
    const body = { id: container.id, partitionKey: container.partitionKey, indexingPolicy: JSON.parse(policy.value) };
    if (container.defaultTtl !== undefined) body.defaultTtl = container.defaultTtl;
    const res = await guard(() => request("PUT", collPath, { body }));
    if (res) {
      state.container = res.body;
      status(`indexing policy of ${db}/${coll} saved`);
    }
  });
  const del = confirmButton("Delete container", `Delete container ${db}/${coll} and all its items?`, async () => {
    const ok = await guard(() => request("DELETE", collPath));
    if (ok) {
      status(`deleted container ${db}/${coll}`);
      closeContainer();
      loadTree();
    }
  });
  root.append(
    el("h2", {}, "Throughput"),
    el("div", { class: "row" }, el("label", { for: "throughput" }, "RU/s"), rus, saveRUs),
    offerInfo,
    el("h2", {}, "Indexing policy"),
    policy,
    policyCheck,
    el("div", { class: "row" }, savePolicy),
    el("h2", {}, "Danger zone"),
    el("div", { class: "row" }, del),
  );
  loadOffer();
}

// ---- advice ------------------------------------------------------------

function adviceView(root, { db, coll }) {
  const cands = el("textarea", { class: "params", id: "advice-candidates", spellcheck: "false", "aria-label": "Candidate keys, one per line", placeholder: "/date\nconcat(/date, \".\", hash(/vin, 400))" });
  const run = el("button", { type: "button", class: "primary", id: "run-advice" }, "Analyze");
  const download = el("button", { type: "button", id: "advice-html" }, "Download the HTML report");
  const out = el("div", { id: "advice-report" });
  const body = () => ({ candidates: cands.value.split("\n").map((s) => s.trim()).filter(Boolean) });
  const path = ["dbs", db, "colls", coll, "advise"];
  run.addEventListener("click", async () => {
    clear(out).append(el("p", { class: "muted" }, "analyzing the container's documents…"));
    run.disabled = true;
    const res = await guard(() => request("POST", path, { body: body() }));
    run.disabled = false;
    clear(out);
    if (res) out.append(adviceReport(res.body));
  });
  download.addEventListener("click", async () => {
    const res = await guard(() => request("POST", path, { body: body(), accept: "text/html" }));
    if (!res) return;
    const url = URL.createObjectURL(new Blob([res.body], { type: "text/html" }));
    const a = el("a", { href: url, download: `advice-${db}-${coll}.html` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  });
  root.append(
    el("p", {}, "Ranks partition-key candidates on this container's documents and recorded load, as ", el("code", {}, `parsec advise --live ${db}/${coll}`), " does. Without candidates, the advisor proposes some beside the current key."),
    el("label", { for: "advice-candidates" }, "Candidates (optional, one per line)"),
    cands,
    el("div", { class: "row" }, run, download),
    out,
  );
}

function adviceReport(rep) {
  const src = rep.source || {};
  const body = el("tbody");
  for (const c of rep.candidates || []) {
    body.append(
      el(
        "tr",
        {},
        el("td", { class: "num" }, String(c.rank)),
        el("td", { class: "mono" }, c.key, c.current ? el("span", { class: "muted" }, " (current)") : ""),
        el("td", {}, c.summary || ""),
        el("td", {}, (c.throttle && c.throttle.risk) || ""),
        el("td", { class: "num" }, fmt(c.distinctValues)),
        el("td", {}, el("ul", {}, ...(c.reasons || []).map((r) => el("li", {}, r)))),
      ),
    );
  }
  return el(
    "div",
    {},
    el("p", {}, `${fmt(src.documents)} documents (${fmt(src.bytes)} bytes) on ${rep.partitions} partitions (${rep.partitionsFrom}), ${fmt(rep.throughput)} RU/s.`),
    ...(rep.warnings || []).map((w) => el("p", { class: "invalid" }, `warning: ${w}`)),
    el(
      "table",
      { id: "advice-ranking", "aria-label": "Ranking of candidate keys" },
      el("thead", {}, el("tr", {}, el("th", { class: "num" }, "Rank"), el("th", {}, "Key"), el("th", {}, "Verdict"), el("th", {}, "429 risk"), el("th", { class: "num" }, "Distinct"), el("th", {}, "Why"))),
      body,
    ),
  );
}

boot();
