// Submits a transaction to the server at process.argv[2] (a path-style
// endpoint) on table process.argv[3] and prints what the SDK made of the
// batch response, as JSON.
const { TableClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
(async () => {
  const t = new TableClient(process.argv[2], process.argv[3], new AzureNamedKeyCredential("devstoreaccount1", key),
    { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
  try {
    const r = await t.submitTransaction([
      ["create", { partitionKey: "p1", rowKey: "r1" }],
      ["create", { partitionKey: "p1", rowKey: "r2" }],
      ["delete", { partitionKey: "p1", rowKey: "r3" }],
    ]);
    console.log(JSON.stringify({ status: r.status, subResponses: r.subResponses.map(s => ({ status: s.status, rowKey: s.rowKey, etag: s.etag })) }));
  } catch (e) {
    console.log(JSON.stringify({ error: { statusCode: e.statusCode, code: e.code, message: e.message } }));
  }
})();
