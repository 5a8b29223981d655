import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { CosmosClient, EncryptionAlgorithm, EncryptionType, KeyEncryptionAlgorithm } from "@azure/cosmos";
import { startServer, emulatorKey } from "./server.js";

// The JavaScript SDK's client-side encryption against Parsec: the server
// stores the wrapped data encryption key and the encrypted values and never
// sees a key or a value in clear. The key encryption key is the test's own
// (AES-256-GCM wrapping through the SDK's resolver interface), in place of
// Azure Key Vault.
const kek = randomBytes(32);
const resolver = {
  encryptionKeyResolverName: "LOCAL_TEST",
  async wrapKey(_id, _alg, key) {
    const iv = randomBytes(12);
    const c = createCipheriv("aes-256-gcm", kek, iv);
    const body = Buffer.concat([c.update(Buffer.from(key)), c.final()]);
    return new Uint8Array(Buffer.concat([iv, c.getAuthTag(), body]));
  },
  async unwrapKey(_id, _alg, wrapped) {
    const b = Buffer.from(wrapped);
    const d = createDecipheriv("aes-256-gcm", kek, b.subarray(0, 12));
    d.setAuthTag(b.subarray(12, 28));
    return new Uint8Array(Buffer.concat([d.update(b.subarray(28)), d.final()]));
  },
};

let server;
let client;
let plain;

before(async () => {
  server = await startServer(["--no-throttle"]);
  client = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey, clientEncryptionOptions: { keyEncryptionKeyResolver: resolver } });
  plain = new CosmosClient({ endpoint: server.endpoint, key: emulatorKey });
});

after(async () => {
  client?.dispose?.();
  plain?.dispose?.();
  await server?.stop();
});

test("client encryption keys and encrypted properties round-trip; the server holds only ciphertext", async () => {
  const { database } = await client.databases.createIfNotExists({ id: "enc" });
  const meta = { type: "LOCAL_TEST", name: "kek1", value: "local/kek1", algorithm: KeyEncryptionAlgorithm.RSA_OAEP };
  const created = await database.createClientEncryptionKey("cek1", EncryptionAlgorithm.AEAD_AES_256_CBC_HMAC_SHA256, meta);
  assert.equal(created.statusCode, 201);
  const { resource: cek } = await database.readClientEncryptionKey("cek1");
  assert.equal(cek.id, "cek1");
  assert.ok(cek.wrappedDataEncryptionKey.length > 0);

  const clientEncryptionPolicy = {
    includedPaths: [
      { path: "/secret", clientEncryptionKeyId: "cek1", encryptionType: EncryptionType.DETERMINISTIC, encryptionAlgorithm: EncryptionAlgorithm.AEAD_AES_256_CBC_HMAC_SHA256 },
    ],
    policyFormatVersion: 2,
  };
  const { container } = await database.containers.createIfNotExists({ id: "c", partitionKey: { paths: ["/pk"] }, clientEncryptionPolicy });
  await container.items.create({ id: "1", pk: "p", secret: "top secret", open: "in clear" });
  const { resource } = await container.item("1", "p").read();
  assert.equal(resource.secret, "top secret");
  assert.equal(resource.open, "in clear");

  // What the server holds: ciphertext for the encrypted path only.
  const { resource: stored } = await plain.database("enc").container("c").item("1", "p").read();
  assert.notEqual(stored.secret, "top secret");
  assert.equal(typeof stored.secret, "string");
  assert.equal(stored.open, "in clear");

  // The container definition keeps its policy, and the key is listed.
  const { resource: def } = await plain.database("enc").container("c").read();
  assert.deepEqual(def.clientEncryptionPolicy.includedPaths.map((p) => p.path), ["/secret"]);
  const res = await fetch(`${server.endpoint.replace(/\/$/, "")}/dbs/enc/clientencryptionkeys`, { method: "GET" });
  assert.equal(res.status, 401, "the keys feed needs a signature");
});
