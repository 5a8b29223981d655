// Drives the real gremlin-javascript driver (npm gremlin 3.7.4) against
// the test server: one script with bindings through Client.submit, one
// bytecode traversal through DriverRemoteConnection. Prints what the
// driver decoded, with class tags, as one JSON document.
//
// usage: NODE_PATH=<dir with node_modules/gremlin> node client.js <url> <mime>
'use strict';
const gremlin = require('gremlin');

const { P, TextP, order, cardinality, EnumValue } = gremlin.process;
const __ = gremlin.process.statics;
const S = gremlin.structure;

function describe(v) {
  if (v === null || v === undefined) return null;
  if (v instanceof S.Vertex) return { class: 'Vertex', id: describe(v.id), label: v.label, properties: describe(v.properties) };
  if (v instanceof S.Edge) {
    return { class: 'Edge', id: describe(v.id), label: v.label, inV: describe(v.inV), outV: describe(v.outV), properties: describe(v.properties) };
  }
  if (v instanceof S.VertexProperty) return { class: 'VertexProperty', id: describe(v.id), label: v.label, value: describe(v.value), properties: describe(v.properties) };
  if (v instanceof S.Property) return { class: 'Property', key: v.key, value: describe(v.value) };
  if (v instanceof S.Path) return { class: 'Path', labels: describe(v.labels), objects: describe(v.objects) };
  if (v instanceof Map) return { class: 'Map', entries: [...v.entries()].map(([k, x]) => [describe(k), describe(x)]) };
  if (v instanceof Set) return { class: 'Set', items: [...v].map(describe) };
  if (Array.isArray(v)) return v.map(describe);
  if (v instanceof Date) return { class: 'Date', ms: v.getTime() };
  if (v instanceof EnumValue) return { class: 'Enum', type: v.typeName, name: v.elementName };
  if (typeof v === 'number') return Number.isFinite(v) ? v : { class: 'number', value: String(v) };
  if (typeof v === 'bigint') return { class: 'bigint', value: v.toString() };
  if (typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = describe(x);
    return { class: 'Object', members: out };
  }
  return v;
}

async function main() {
  const [url, mime] = process.argv.slice(2);
  const out = {};
  const client = new gremlin.driver.Client(url, { mimeType: mime, traversalSource: 'g' });
  const rs = await client.submit("g.V().has('age', gt(x))", {
    x: 27,
    name: 'marko',
    ratio: 0.5,
    when: new Date(1700000000123),
    list: [1, 'two'],
    obj: { a: 1 },
  });
  out.script = rs.toArray().map(describe);
  out.attributes = describe(rs.attributes);
  await client.close();

  const drc = new gremlin.driver.DriverRemoteConnection(url, { mimeType: mime });
  const g = gremlin.process.AnonymousTraversalSource.traversal().withRemote(drc);
  const res = await g
    .withSideEffect('x', 1)
    .V('1')
    .has('age', P.within(1, 2).or(P.lt(0)))
    .where(__.out('knows').has('name', TextP.startingWith('j')))
    .order()
    .by('name', order.desc)
    .property(cardinality.list, 'k', 1.5)
    .has('age', P.between(20, 30))
    .values('name')
    .limit(2)
    .toList();
  out.bytecode = res.map(describe);
  await drc.close();
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err));
  process.exit(1);
});
