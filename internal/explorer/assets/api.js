// Signed requests to the Cosmos REST API of the server that serves this
// page, signed in the browser with the account key exactly as the SDKs sign
// them: HMAC-SHA256 over "verb\ntype\nlink\ndate\n\n" (lower-cased but for
// the link), sent as type=master&ver=1.0&sig=... (URL-encoded).

export const emulatorKey =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

const keyStorage = "parsec.explorer.key";
const apiVersion = "2020-07-15";

// CosmosError is a response the server refused: its status, code and message.
export class CosmosError extends Error {
  constructor(status, code, message, headers) {
    super(message);
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
  // describe says in plain words what went wrong, with the status and the
  // server's own message.
  describe() {
    const name = statusNames[this.status] || "";
    return `${this.status}${name ? " " + name : ""}: ${this.message}`;
  }
}

const statusNames = {
  400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
  409: "Conflict", 412: "Precondition Failed", 413: "Request Entity Too Large", 429: "Too Many Requests",
  449: "Retry With", 500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
};

let cryptoKey = null;

// signIn checks the key against the server (reading the account) and keeps
// it in the tab's session storage.
export async function signIn(key) {
  if (!globalThis.crypto || !crypto.subtle) {
    throw new Error("this browser offers no WebCrypto here: open the explorer over HTTPS (parsec serve --tls) or on a loopback address");
  }
  let raw;
  try {
    raw = Uint8Array.from(atob(key.trim()), (c) => c.charCodeAt(0));
  } catch {
    throw new Error("the key is not valid base64");
  }
  cryptoKey = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  try {
    const account = await request("GET", []);
    sessionStorage.setItem(keyStorage, key.trim());
    return account.body;
  } catch (e) {
    cryptoKey = null;
    throw e;
  }
}

// resume signs in again with the key kept in session storage, if any.
export async function resume() {
  const key = sessionStorage.getItem(keyStorage);
  if (!key) return null;
  try {
    return await signIn(key);
  } catch {
    sessionStorage.removeItem(keyStorage);
    return null;
  }
}

export function signOut() {
  cryptoKey = null;
  sessionStorage.removeItem(keyStorage);
}

// resource gives the resource type and link a request to these path
// segments is signed with (as the server's auth.Resource derives them).
export function resource(segs) {
  if (segs.length === 0) return ["", ""];
  let type, link;
  if (segs.length % 2 === 1) {
    type = segs[segs.length - 1];
    link = segs.slice(0, -1).join("/");
  } else {
    type = segs[segs.length - 2];
    link = segs.join("/");
  }
  if (link !== "" && segs[0] !== "dbs") link = segs[segs.length - 1].toLowerCase();
  return [type, link];
}

async function authorization(verb, segs, date) {
  const [type, link] = resource(segs);
  const text = `${verb.toLowerCase()}\n${type.toLowerCase()}\n${link}\n${date.toLowerCase()}\n\n`;
  const sig = await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(text));
  const b64 = btoa(String.fromCharCode(...new Uint8Array(sig)));
  return encodeURIComponent(`type=master&ver=1.0&sig=${b64}`);
}

// request sends a signed request to the resource at path segments segs
// (ids as they are, not encoded) and returns {status, headers, body, charge}.
// body, when given, is sent as JSON (a string is sent as it is). A refusal
// throws a CosmosError.
export async function request(method, segs, { body, headers = {}, accept } = {}) {
  if (!cryptoKey) throw new Error("not signed in");
  const date = new Date().toUTCString();
  const h = {
    "x-ms-date": date,
    "x-ms-version": apiVersion,
    authorization: await authorization(method, segs, date),
    ...headers,
  };
  if (accept) h.accept = accept;
  let payload;
  if (body !== undefined) {
    payload = typeof body === "string" ? body : JSON.stringify(body);
    if (!h["content-type"]) h["content-type"] = "application/json";
  }
  const url = "/" + segs.map(encodeURIComponent).join("/");
  const res = await fetch(url, { method, headers: h, body: payload, cache: "no-store" });
  const text = await res.text();
  let parsed = text;
  if ((res.headers.get("content-type") || "").includes("json") && text !== "") {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  if (!res.ok && res.status !== 304) {
    const msg = (parsed && parsed.message) || text || res.statusText;
    throw new CosmosError(res.status, (parsed && parsed.code) || "", msg, res.headers);
  }
  return {
    status: res.status,
    headers: res.headers,
    body: parsed,
    charge: parseFloat(res.headers.get("x-ms-request-charge") || "0"),
  };
}

// partitionKeyOf is the x-ms-documentdb-partitionkey value of an item
// under a container's partition key definition: the item's values at the
// key's paths, with {} for a value that is missing (undefined).
export function partitionKeyOf(doc, def) {
  const paths = (def && def.paths) || [];
  return paths.map((p) => {
    let v = doc;
    for (const part of p.split("/").slice(1)) {
      if (v === null || typeof v !== "object" || !(part in v)) return {};
      v = v[part];
    }
    return v === undefined ? {} : v;
  });
}
