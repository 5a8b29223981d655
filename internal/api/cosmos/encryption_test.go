package cosmos

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// Client encryption keys over the protocol: create, read, rewrap with an
// etag, list; bad bodies are 400s that say what is wrong; the read-only key
// reads but does not write; deleting the database deletes its keys.
func TestClientEncryptionKeys(t *testing.T) {
	ts := newTestServer(t, Config{})
	ts.seed(t)
	const path = "/dbs/db/clientencryptionkeys"
	body := func(id, wrapped string) []byte {
		return []byte(`{"id":"` + id + `","encryptionAlgorithm":"AEAD_AES_256_CBC_HMAC_SHA256",` +
			`"keyWrapMetadata":{"type":"AZURE_KEY_VAULT","name":"k","value":"https://vault/keys/k","algorithm":"RSA-OAEP"},` +
			`"wrappedDataEncryptionKey":"` + wrapped + `"}`)
	}
	st, b := ts.do(ts.primary, http.MethodPost, path, body("cek", "AAEC"), nil)
	if st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	var k struct {
		Etag    string `json:"_etag"`
		Wrapped string `json:"wrappedDataEncryptionKey"`
		Self    string `json:"_self"`
	}
	if err := json.Unmarshal(b, &k); err != nil || k.Wrapped != "AAEC" || !strings.Contains(k.Self, "/clientencryptionkeys/") {
		t.Fatalf("created key %s (%v)", b, err)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, path, body("cek", "AAEC"), nil); st != http.StatusConflict {
		t.Fatalf("create again: %d %s", st, b)
	}
	for name, bad := range map[string]string{
		"encryptionAlgorithm":      `{"id":"x","encryptionAlgorithm":"AES","keyWrapMetadata":{"name":"k","value":"v"},"wrappedDataEncryptionKey":"AAEC"}`,
		"keyWrapMetadata":          `{"id":"x","encryptionAlgorithm":"AEAD_AES_256_CBC_HMAC_SHA256","wrappedDataEncryptionKey":"AAEC"}`,
		"wrappedDataEncryptionKey": `{"id":"x","encryptionAlgorithm":"AEAD_AES_256_CBC_HMAC_SHA256","keyWrapMetadata":{"name":"k","value":"v"},"wrappedDataEncryptionKey":"not base64!"}`,
	} {
		if st, b := ts.do(ts.primary, http.MethodPost, path, []byte(bad), nil); st != http.StatusBadRequest || !strings.Contains(string(b), name) {
			t.Errorf("bad %s: %d %s", name, st, b)
		}
	}
	if st, b := ts.do(ts.readOnly, http.MethodPost, path, body("ro", "AAEC"), nil); st != http.StatusForbidden {
		t.Errorf("create with the read-only key: %d %s", st, b)
	}
	if st, b := ts.do(ts.readOnly, http.MethodGet, path+"/cek", nil, nil); st != http.StatusOK {
		t.Errorf("read with the read-only key: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPut, path+"/cek", body("cek", "AwQF"), map[string]string{"If-Match": `"stale"`}); st != http.StatusPreconditionFailed {
		t.Errorf("rewrap with a stale etag: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPut, path+"/cek", body("cek", "AwQF"), map[string]string{"If-Match": k.Etag}); st != http.StatusOK || !strings.Contains(string(b), `"AwQF"`) {
		t.Errorf("rewrap: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodGet, path, nil, nil); st != http.StatusOK || !strings.Contains(string(b), `"_count":1`) {
		t.Errorf("list: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodDelete, "/dbs/db", nil, nil); st != http.StatusNoContent {
		t.Fatalf("delete database: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodPost, "/dbs", []byte(`{"id":"db"}`), nil); st != http.StatusCreated {
		t.Fatalf("create database again: %d %s", st, b)
	}
	if st, b := ts.do(ts.primary, http.MethodGet, path+"/cek", nil, nil); st != http.StatusNotFound {
		t.Errorf("a key of a deleted database: %d %s", st, b)
	}
}
