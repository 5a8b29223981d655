// Starts the parsec binary named by PARSEC_BIN on a free loopback port with
// in-memory storage, and returns its endpoint and a stop function.
import { spawn } from "node:child_process";

export const emulatorKey =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

export async function startServer(extraArgs = []) {
  const bin = process.env.PARSEC_BIN;
  if (!bin) throw new Error("PARSEC_BIN must name the parsec binary");
  const child = spawn(bin, ["serve", "--in-memory", "--listen", "127.0.0.1:0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  // The startup lines end with the explorer's; the MongoDB and Gremlin
  // APIs' lines come before it when --mongo-listen or --gremlin-listen is
  // given.
  const { endpoint, mongoURL, gremlinURL } = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("server did not start: " + stderr)), 10000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/on (https?:\/\/[^ ]+) /);
      if (m && /Parsec Explorer at /.test(out)) {
        clearTimeout(timer);
        const mongo = out.match(/MongoDB API on (mongodb:\/\/\S+)/);
        const gremlin = out.match(/Gremlin API on (wss?:\/\/\S+)/);
        resolve({ endpoint: m[1], mongoURL: mongo ? mongo[1] : undefined, gremlinURL: gremlin ? gremlin[1] : undefined });
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return {
    endpoint,
    mongoURL,
    gremlinURL,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}

// rawRequest sends a master-key signed REST request, for what the SDK does
// not expose directly (a read feed scoped to one partition key range).
import { createHmac } from "node:crypto";

export async function rawRequest(endpoint, method, path, headers = {}, key = emulatorKey, body = undefined) {
  const segs = path.replace(/^\/|\/$/g, "").split("/");
  let type, link;
  if (segs.length % 2 === 1) {
    type = segs[segs.length - 1];
    link = segs.slice(0, -1).join("/");
  } else {
    type = segs[segs.length - 2];
    link = segs.join("/");
  }
  const date = new Date().toUTCString();
  const toSign = `${method.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(toSign).digest("base64");
  const res = await fetch(endpoint.replace(/\/$/, "") + path, {
    method,
    headers: {
      "x-ms-date": date,
      "x-ms-version": "2020-07-15",
      authorization: encodeURIComponent(`type=master&ver=1.0&sig=${sig}`),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
