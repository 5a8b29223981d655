const http = require("http");
const fs = require("fs");
const { TableClient, TableServiceClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const [out, style] = process.argv.slice(2);
const reqs = [];
const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const srv = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", c => chunks.push(c));
  req.on("end", () => {
    const headers = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
    reqs.push({ method: req.method, target: req.url, headers, body: Buffer.concat(chunks).toString() });
    res.writeHead(500, { "content-type": "application/json" });
    res.end('{"odata.error":{"code":"X","message":{"lang":"en-US","value":"capture"}}}');
  });
});
srv.listen(0, "127.0.0.1", async () => {
  const port = srv.address().port;
  const acct = style === "cosmos" ? "localhost" : "devstoreaccount1";
  const ep = style === "cosmos" ? `http://localhost:${port}` : `http://127.0.0.1:${port}/devstoreaccount1`;
  const cred = new AzureNamedKeyCredential(acct, key);
  const opts = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
  const svc = new TableServiceClient(ep, cred, opts);
  const t = new TableClient(ep, "mytable", cred, opts);
  for (const f of [() => svc.createTable("mytable"), () => t.getEntity("p 1", "r'1/é"), () => t.getAccessPolicy(),
                   async () => { for await (const e of t.listEntities({ queryOptions: { filter: "PartitionKey eq 'p'" } })) {} }]) {
    try { await f(); } catch (e) {}
  }
  fs.writeFileSync(out, JSON.stringify({ sdk: "@azure/data-tables 13.3.2", account: acct, key, requests: reqs }, null, 1));
  srv.close();
});
