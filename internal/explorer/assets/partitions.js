// The live partition view: a container's hash space drawn as a strip of
// its physical partitions, each as wide as its EPK range and coloured by
// the request units it consumed in the last second against its budget,
// refreshed every second from GET /dbs/{db}/colls/{c}/partitions.
import { request } from "./api.js";
import { el, clear, fmt } from "./dom.js";

const refreshMs = 1000;
const sampleSize = 10;

// epkFraction places an EPK range bound of a version 2 (or MultiHash) key
// on [0, 1]. Such EPKs are hashes with the top two bits cleared, so the
// real hash space is [00…, 40…): "" is its start, and "FF" (the end of the
// EPK space) and anything past 40… is its end.
export function epkFraction(bound) {
  if (bound === "") return 0;
  return Math.min(1, parseInt((bound + "00000000").slice(0, 8), 16) / 0x40000000);
}

// widths gives each partition's share of the strip: its share of the hash
// space for version 2 keys; for version 1 keys, whose EPKs encode the hash
// as a variable-length number, an equal share each (the strip says so).
function widths(parts, def) {
  if (def && (def.version === 2 || def.kind === "MultiHash")) {
    return parts.map((p) => epkFraction(p.maxExclusive) - epkFraction(p.minInclusive));
  }
  return parts.map(() => 1 / parts.length);
}

// shortEPK abbreviates a range bound for the table (the full one is in the
// cell's title).
function shortEPK(b) {
  if (b === "") return '""';
  return b.length > 10 ? b.slice(0, 8) + "…" : b;
}

// heat is the colour of a partition using share u of its budget: none for
// an idle one, then from green (little) to red (all of it, or more). The
// lightness keeps the dark label readable on every hue of the range (a
// contrast of at least 5:1, red being the darkest).
export function heat(u) {
  if (!(u > 0.0005)) return null;
  const hue = Math.round(120 * (1 - Math.min(u, 1)));
  return `hsl(${hue}, 72%, 62%)`;
}

export function renderPartitions(root, { db, coll, container, guard, status }) {
  const def = container.partitionKey;
  const toScale = def && (def.version === 2 || def.kind === "MultiHash");
  const path = ["dbs", db, "colls", coll, "partitions"];
  const strip = el("div", { class: "strip", id: "partition-strip", role: "group", "aria-label": "Physical partitions across the hash space" });
  const summary = el("p", { id: "partition-summary" });
  const rows = el("tbody");
  const detail = el("div", { class: "card", id: "partition-detail" }, el("p", { class: "muted" }, "Click a partition to see its hot keys and some of its items."));
  const history = el("ul", { class: "events", id: "split-history", tabindex: "0" });
  const events = el("ul", { class: "events", id: "partition-events", tabindex: "0" });
  const prev = new Map(); // id -> {consumed, throttled, at}
  let known = null; // ids seen at the previous refresh
  let throughput = null;
  let selected = null;
  let last = null;
  let timer = null;
  let stopped = false;

  const event = (text) => {
    events.prepend(el("li", {}, `${new Date().toLocaleTimeString()} ${text}`));
    while (events.children.length > 50) events.lastChild.remove();
  };

  const refresh = async () => {
    let res;
    try {
      res = await request("GET", path);
    } catch (e) {
      if (!stopped) guard(() => Promise.reject(e));
      return;
    }
    if (stopped) return;
    const t = res.body;
    const now = performance.now();
    const parts = [...(t.partitions || [])].sort((a, b) => (a.minInclusive < b.minInclusive ? -1 : a.minInclusive > b.minInclusive ? 1 : 0));
    const ids = new Set(parts.map((p) => p.id));
    if (known) {
      const born = parts.filter((p) => !known.has(p.id));
      const parents = new Set(born.flatMap((p) => p.parents || []));
      for (const parent of parents) {
        const kids = born.filter((p) => (p.parents || []).includes(parent)).map((p) => p.id);
        event(`partition ${parent} split into ${kids.join(", ")}`);
      }
    }
    const tp = Math.max(t.throughput || 0, t.autoscaleMaxThroughput || 0);
    if (throughput !== null && tp !== throughput) event(`throughput ${fmt(throughput)} → ${fmt(tp)} RU/s`);
    throughput = tp;
    known = ids;
    for (const p of parts) {
      const before = prev.get(p.id);
      const dt = before ? (now - before.at) / 1000 : 0;
      p.rate = before && dt > 0 ? Math.max(0, (p.consumedRUs - before.consumed) / dt) : 0;
      p.newThrottles = before ? p.throttled - before.throttled : 0;
      p.utilization = p.budgetRUs > 0 ? p.rate / p.budgetRUs : 0;
      prev.set(p.id, { consumed: p.consumedRUs, throttled: p.throttled, at: now });
    }
    last = parts;
    draw(t, parts);
  };

  const draw = (t, parts) => {
    clear(strip);
    const shares = widths(parts, def);
    for (const [i, p] of parts.entries()) {
      const width = shares[i] * 100;
      const colour = heat(p.utilization);
      const hot = p.topKeysByRU && p.topKeysByRU.length ? p.topKeysByRU[0].key : "";
      const b = el(
        "button",
        {
          type: "button",
          class: `part ${colour ? "hot" : "cold"}`,
          "data-id": p.id,
          "data-utilization": p.utilization.toFixed(4),
          "data-hot-key": hot,
          "aria-pressed": String(selected === p.id),
          title: `partition ${p.id} [${p.minInclusive || '""'}, ${p.maxExclusive}): ${fmt(p.rate)} of ${fmt(p.budgetRUs)} RU/s${hot ? ", hottest key " + hot : ""}`,
        },
        `${p.id} · ${fmt(p.utilization * 100, 1)}%`,
      );
      b.style.flex = `0 0 ${width}%`;
      if (colour) b.style.background = colour;
      b.addEventListener("click", () => select(p.id));
      strip.append(b);
    }
    const throttled = parts.reduce((n, p) => n + p.newThrottles, 0);
    summary.textContent = `${parts.length} physical partitions, ${fmt(throughput)} RU/s provisioned${t.sharedThroughput ? " (shared)" : ""}; ${fmt(parts.reduce((n, p) => n + p.rate, 0))} RU/s consumed now${throttled ? `, ${fmt(throttled)} requests throttled in the last second` : ""}.`;
    clear(rows);
    for (const p of parts) {
      const tr = el(
        "tr",
        { class: "pick", tabindex: "0", "data-id": p.id, "aria-selected": String(selected === p.id) },
        el("td", {}, p.id),
        el("td", { class: "mono", title: `[${p.minInclusive || '""'}, ${p.maxExclusive})` }, `${shortEPK(p.minInclusive)} – ${shortEPK(p.maxExclusive)}`),
        el("td", { class: "num" }, fmt(p.rate)),
        el("td", { class: "num" }, fmt(p.budgetRUs)),
        el("td", { class: "num" }, fmt(p.throttled)),
        el("td", { class: "num" }, fmt(p.storageBytes)),
        el("td", { class: "num" }, fmt(p.itemCount)),
        el("td", { class: "mono hot-key" }, p.topKeysByRU && p.topKeysByRU.length ? p.topKeysByRU[0].key : ""),
      );
      tr.addEventListener("click", () => select(p.id));
      tr.addEventListener("keydown", (e) => e.key === "Enter" && select(p.id));
      rows.append(tr);
    }
    clear(history);
    for (const p of parts.filter((p) => p.parents && p.parents.length)) {
      history.append(el("li", {}, `partition ${p.id} from ${p.parents.join(" → ")}`));
    }
    if (!history.children.length) history.append(el("li", { class: "muted" }, "no splits yet"));
    if (selected) showDetail(parts.find((p) => p.id === selected), false);
  };

  const select = (id) => {
    selected = id;
    for (const b of strip.querySelectorAll("button.part")) b.setAttribute("aria-pressed", String(b.dataset.id === id));
    for (const r of rows.querySelectorAll("tr")) r.setAttribute("aria-selected", String(r.dataset.id === id));
    showDetail(last && last.find((p) => p.id === id), true);
  };

  // showDetail shows a partition's hot keys; withSample also reads a few of
  // its items (a read feed scoped to the partition's range).
  const keysBox = el("div");
  const sampleBox = el("div", { id: "partition-sample" });
  const showDetail = async (p, withSample) => {
    if (!p) {
      clear(detail).append(el("p", { class: "muted" }, `partition ${selected} is gone (split); pick another`));
      return;
    }
    const keyList = (keys, unit) =>
      keys && keys.length ? el("ol", {}, ...keys.map((k) => el("li", {}, el("code", {}, k.key), ` ${fmt(k.value, unit === "RU" ? 1 : 0)} ${unit}`))) : el("p", { class: "muted" }, "none recorded");
    clear(keysBox).append(
      el("h2", {}, `Partition ${p.id}`),
      el("p", { class: "mono" }, `[${p.minInclusive || '""'}, ${p.maxExclusive})`),
      el("h3", {}, "Hottest keys by request units (recent)"),
      keyList(p.topKeysByRU, "RU"),
      el("h3", {}, "Largest keys by storage"),
      keyList(p.topKeysByStorage, "bytes"),
    );
    if (!detail.contains(keysBox)) clear(detail).append(keysBox, sampleBox);
    if (!withSample) return;
    const res = await guard(() =>
      request("GET", ["dbs", db, "colls", coll, "docs"], {
        headers: { "x-ms-documentdb-partitionkeyrangeid": p.id, "x-ms-max-item-count": String(sampleSize) },
      }),
    );
    if (!res) return;
    const docs = res.body.Documents || [];
    clear(sampleBox).append(el("h3", {}, `Some of its items (${docs.length})`), el("pre", { class: "json" }, JSON.stringify(docs, null, 2)));
  };

  const loop = async () => {
    await refresh();
    if (!stopped) timer = setTimeout(loop, refreshMs);
  };

  root.append(
    summary,
    strip,
    el(
      "div",
      { class: "scale" },
      el("span", {}, "hash 0"),
      el("span", {}, toScale ? "the hash space, to scale" : "version 1 partition key: partitions drawn equally wide, not to scale"),
      el("span", {}, "hash max"),
    ),
    el(
      "div",
      { class: "legend" },
      el("span", {}, el("span", { class: "swatch cold-swatch" }), "idle"),
      el("span", {}, el("span", { class: "swatch green-swatch" }), "little of its budget"),
      el("span", {}, el("span", { class: "swatch red-swatch" }), "all of it (429s follow)"),
    ),
    el(
      "div",
      { class: "split" },
      detail,
      el(
        "div",
        {},
        el(
          "table",
          { "aria-label": "Physical partitions" },
          el(
            "thead",
            {},
            el("tr", {}, el("th", {}, "Partition"), el("th", {}, "EPK range"), el("th", { class: "num" }, "RU/s now"), el("th", { class: "num" }, "Budget"), el("th", { class: "num" }, "429s"), el("th", { class: "num" }, "Bytes"), el("th", { class: "num" }, "Items"), el("th", {}, "Hottest key")),
          ),
          rows,
        ),
        el("h3", {}, "Split history"),
        history,
        el("h3", {}, "Changes seen"),
        events,
      ),
    ),
  );
  status(`watching ${db}/${coll}: refreshed every second`);
  loop();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
