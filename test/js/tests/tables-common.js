// Servers and clients for the Table API tests: Parsec with --table-listen,
// Azurite's in-memory Table service, and @azure/data-tables clients in the
// two URL styles the SDK tells apart (host-style localhost is Cosmos DB,
// path-style 127.0.0.1/devstoreaccount1 is Storage; the SDK's
// utils/isCosmosEndpoint.js).
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { TableServiceClient, TableClient, AzureNamedKeyCredential } from "@azure/data-tables";
import { emulatorKey } from "./server.js";

export { emulatorKey };

// Azurite's well-known development account and key.
export const azuriteAccount = "devstoreaccount1";
export const azuriteKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

export const readOnlyKey = Buffer.from("table-tests-read-only-key-table-tests-read-only-key!!").toString("base64");

function waitFor(child, re, what) {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${out} ${err}`)), 20000);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(re);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}: ${err}`));
    });
  });
}

function stopper(child) {
  return () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once("exit", resolve);
      child.kill("SIGTERM");
    });
}

// startParsecTables runs PARSEC_BIN in memory with the Table API on a free
// loopback port and returns that port.
export async function startParsecTables(extraArgs = []) {
  const bin = process.env.PARSEC_BIN;
  if (!bin) throw new Error("PARSEC_BIN must name the parsec binary");
  const child = spawn(bin, ["serve", "--in-memory", "--listen", "127.0.0.1:0", "--table-listen", "127.0.0.1:0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const m = await waitFor(child, /Table API on https?:\/\/[^:\s]+:(\d+)\/[\s\S]*Parsec Explorer at /, "parsec");
  return { port: Number(m[1]), stop: stopper(child) };
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on("error", reject);
  });
}

const azuriteBin = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "azurite-table");

// startAzurite runs Azurite's Table service in memory on a free port.
export async function startAzurite() {
  const port = await freePort();
  const child = spawn(
    azuriteBin,
    ["--inMemoryPersistence", "--tableHost", "127.0.0.1", "--tablePort", String(port), "--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry"],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  await waitFor(child, /Table service successfully started/, "azurite");
  return { port, stop: stopper(child) };
}

// The two URL styles. account is the name a SharedKey signature carries.
export const styles = [
  { name: "host-style (Cosmos)", cosmos: true, url: (port) => `http://localhost:${port}/`, account: "localhost" },
  { name: "path-style (Storage)", cosmos: false, url: (port) => `http://127.0.0.1:${port}/devstoreaccount1`, account: "devstoreaccount1" },
];

// methods records each request's method (with X-HTTP-Method when the SDK
// tunnels MERGE through POST) into the array it is given.
export function clientOptions(seen) {
  const o = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
  if (seen) {
    o.additionalPolicies = [
      {
        position: "perRetry",
        policy: {
          name: "recordMethods",
          sendRequest: (req, next) => {
            const x = req.headers.get("x-http-method");
            seen.push(x ? `${req.method}+${x}` : req.method);
            return next(req);
          },
        },
      },
    ];
  }
  return o;
}

export function sharedKeyClients(url, account, key, seen) {
  const cred = new AzureNamedKeyCredential(account, key);
  return {
    cred,
    service: new TableServiceClient(url, cred, clientOptions(seen)),
    table: (name) => new TableClient(url, name, cred, clientOptions(seen)),
  };
}

// errInfo is what a failed SDK call tells a program: the status, the code
// the SDK surfaces (RestError.code), and the odata.error code of the body.
export function errInfo(e) {
  if (!e || e.statusCode === undefined) throw e;
  return {
    status: e.statusCode,
    code: e.code,
    odataCode: e.details?.odataError?.code ?? e.details?.errorCode ?? e.code,
    message: e.message,
  };
}

// fails runs p and returns errInfo of its rejection, or fails the test.
export async function fails(p) {
  try {
    await p;
  } catch (e) {
    return errInfo(e);
  }
  throw new Error("the call succeeded but was expected to fail");
}

export async function collect(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}
