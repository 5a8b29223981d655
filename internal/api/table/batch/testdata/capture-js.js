const http = require("http");
const { TableClient, AzureNamedKeyCredential } = require("@azure/data-tables");
const fs = require("fs");
const out = process.argv[2];
const srv = http.createServer((req, res) => {
  let chunks = [];
  req.on("data", c => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    fs.writeFileSync(out + ".body", body);
    fs.writeFileSync(out + ".req", req.method + " " + req.url + "\n" + JSON.stringify(req.headers, null, 1));
    res.writeHead(500, {"content-type":"application/json"}); res.end('{"odata.error":{"code":"X","message":{"lang":"en-US","value":"capture"}}}');
  });
});
srv.listen(0, "127.0.0.1", async () => {
  const port = srv.address().port;
  const host = process.argv[3] === "cosmos" ? `http://localhost:${port}` : `http://127.0.0.1:${port}/devstoreaccount1`;
  const cred = new AzureNamedKeyCredential(process.argv[3] === "cosmos" ? "localhost" : "devstoreaccount1", "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");
  const client = new TableClient(host, "mytable", cred, { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
  try {
    await client.submitTransaction([
      ["create", { partitionKey: "p1", rowKey: "r1", n: 1 }],
      ["upsert", { partitionKey: "p1", rowKey: "r2", s: "x'y" }, "Merge"],
      ["update", { partitionKey: "p1", rowKey: "r3", s: "z" }, "Replace", { etag: "W/\"datetime'2024-01-01T00%3A00%3A00Z'\"" }],
      ["delete", { partitionKey: "p1", rowKey: "r4" }],
      ["upsert", { partitionKey: "p1", rowKey: "r5", b: true }, "Replace"],
    ]);
  } catch (e) { console.log("err:", e.message); }
  srv.close();
});
