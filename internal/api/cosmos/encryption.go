package cosmos

import (
	"encoding/base64"
	"encoding/json"
	"net/http"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// Client encryption keys: /dbs/{db}/clientencryptionkeys[/{id}], as the
// SDKs' client-side encryption creates, reads, rewraps and lists them. The
// server keeps what the client gives (the wrapped key and its metadata) and
// never sees a key in clear.
func (s *Server) encryptionKeys(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	db, err := s.engine.Database(op.db)
	if err != nil {
		return err
	}
	switch op.kind {
	case opListEncryptionKeys, opQueryEncryptionKeys:
		keys, err := s.engine.EncryptionKeys(op.db)
		if err != nil {
			return err
		}
		list := make([]any, len(keys))
		for i, k := range keys {
			list[i] = renderEncryptionKey(db, k)
		}
		if op.kind == opQueryEncryptionKeys {
			return s.queryFeed(req, db.Rid, "ClientEncryptionKeys", list)
		}
		s.writeFeed(req, db.Rid, "ClientEncryptionKeys", list)
	case opReadEncryptionKey:
		k, err := s.engine.EncryptionKey(op.db, op.id)
		if err != nil {
			return err
		}
		s.writeResource(req, http.StatusOK, k.Etag(), renderEncryptionKey(db, k))
	case opCreateEncryptionKey, opReplaceEncryptionKey:
		k, err := readEncryptionKey(req)
		if err != nil {
			return err
		}
		replace := op.kind == opReplaceEncryptionKey
		if replace && k.ID != op.id {
			return errBadRequest("the client encryption key's id cannot change: the path names %q, the body %q", op.id, k.ID)
		}
		k, err = s.engine.PutEncryptionKey(op.db, k, replace, req.r.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		status := http.StatusCreated
		if replace {
			status = http.StatusOK
		}
		s.writeResource(req, status, k.Etag(), renderEncryptionKey(db, k))
	}
	return nil
}

// readEncryptionKey reads and checks a client encryption key's body.
func readEncryptionKey(req *request) (engine.EncryptionKeyInfo, error) {
	var k engine.EncryptionKeyInfo
	body, err := readBody(req)
	if err != nil {
		return k, err
	}
	var in struct {
		ID           *string         `json:"id"`
		Algorithm    *string         `json:"encryptionAlgorithm"`
		WrapMetadata json.RawMessage `json:"keyWrapMetadata"`
		Wrapped      *string         `json:"wrappedDataEncryptionKey"`
	}
	if err := decodeStrict(body, &in); err != nil {
		return k, err
	}
	var meta struct {
		Type, Name, Value, Algorithm string
	}
	switch {
	case in.ID == nil:
		return k, errBadRequest("the client encryption key has no \"id\" property")
	case in.Algorithm == nil || *in.Algorithm != "AEAD_AES_256_CBC_HMAC_SHA256":
		return k, errBadRequest("the client encryption key's encryptionAlgorithm must be \"AEAD_AES_256_CBC_HMAC_SHA256\"")
	case len(in.WrapMetadata) == 0 || json.Unmarshal(in.WrapMetadata, &meta) != nil || meta.Name == "" || meta.Value == "":
		return k, errBadRequest("the client encryption key needs \"keyWrapMetadata\": an object with the key encryption key's \"type\", \"name\", \"value\" and \"algorithm\"")
	case in.Wrapped == nil || *in.Wrapped == "":
		return k, errBadRequest("the client encryption key has no \"wrappedDataEncryptionKey\"")
	}
	if _, err := base64.StdEncoding.DecodeString(*in.Wrapped); err != nil {
		return k, errBadRequest("the client encryption key's wrappedDataEncryptionKey is not base64: %v", err)
	}
	return engine.EncryptionKeyInfo{ID: *in.ID, Algorithm: *in.Algorithm, WrapMetadata: in.WrapMetadata, Wrapped: *in.Wrapped}, nil
}

func renderEncryptionKey(db engine.DatabaseInfo, k engine.EncryptionKeyInfo) map[string]any {
	return map[string]any{
		"id": k.ID, "_rid": k.Rid, "_self": "dbs/" + db.Rid + "/clientencryptionkeys/" + k.Rid + "/", "_etag": k.Etag(), "_ts": k.Ts,
		"encryptionAlgorithm": k.Algorithm, "keyWrapMetadata": k.WrapMetadata, "wrappedDataEncryptionKey": k.Wrapped,
	}
}
