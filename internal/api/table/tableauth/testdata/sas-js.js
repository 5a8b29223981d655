// Prints SAS tokens made by @azure/data-tables 13.3.2, as JSON.
const { generateTableSas, generateAccountSas, AzureNamedKeyCredential } = require("@azure/data-tables");
const key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const cred = new AzureNamedKeyCredential("devstoreaccount1", key);
const startsOn = new Date("2026-11-28T18:00:00Z"), expiresOn = new Date("2026-11-28T20:00:00Z");
const tokens = {
  table: generateTableSas("MyTable", cred, { permissions: { query: true, update: true }, startsOn, expiresOn }),
  tableRange: generateTableSas("MyTable", cred, { permissions: { query: true, update: true }, startsOn, expiresOn,
    startPartitionKey: "p1", startRowKey: "r5", endPartitionKey: "p3", endRowKey: "r2" }),
  tableIP: generateTableSas("MyTable", cred, { permissions: { query: true }, expiresOn, ipRange: { start: "192.0.2.1", end: "192.0.2.20" }, protocol: "https,http" }),
  account: generateAccountSas(cred, { resourceTypes: "co", permissions: { query: true, list: true, add: true }, startsOn, expiresOn }),
};
console.log(JSON.stringify({ sdk: "@azure/data-tables 13.3.2", start: "2026-11-28T18:00:00Z", expiry: "2026-11-28T20:00:00Z", tokens }, null, 1));
