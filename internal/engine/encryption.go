package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/parsecdb/parsec/internal/storage"
)

// Client encryption keys. Client-side encryption (the SDKs' Always
// Encrypted) keeps, per database, data encryption keys wrapped by a key the
// server never sees; the server stores the wrapped key and its metadata and
// hands them back, and stores the encrypted values like any others.

// EncryptionKeyInfo is a client encryption key's stored record. Its JSON
// tags are the stored format, not a wire format: never rename one.
type EncryptionKeyInfo struct {
	ID  string `json:"id"`
	DB  string `json:"db"`
	Rid string `json:"rid"`
	Ts  int64  `json:"ts"`
	Seq uint64 `json:"seq"`
	// Algorithm, WrapMetadata and Wrapped are what the client gave:
	// encryptionAlgorithm, keyWrapMetadata and wrappedDataEncryptionKey.
	Algorithm    string          `json:"encryptionAlgorithm"`
	WrapMetadata json.RawMessage `json:"keyWrapMetadata"`
	Wrapped      string          `json:"wrappedDataEncryptionKey"`
}

// Etag is the key's quoted etag.
func (k EncryptionKeyInfo) Etag() string { return etagOf(k.Seq) }

// MaxEncryptionKeysPerDatabase bounds the client encryption keys of a
// database.
const MaxEncryptionKeysPerDatabase = 1000

// PutEncryptionKey creates (replace false) or replaces a client encryption
// key of a database; ifMatch, when set and not "*", must be the current
// etag of a replaced key.
func (e *Engine) PutEncryptionKey(dbID string, k EncryptionKeyInfo, replace bool, ifMatch string) (EncryptionKeyInfo, error) {
	if err := validateResourceID("client encryption key", k.ID); err != nil {
		return EncryptionKeyInfo{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	db, ok := e.dbs[dbID]
	if !ok {
		return EncryptionKeyInfo{}, notFound("database %q does not exist", dbID)
	}
	cur, found, err := e.encryptionKey(dbID, k.ID)
	if err != nil {
		return EncryptionKeyInfo{}, err
	}
	switch {
	case !replace && found:
		return EncryptionKeyInfo{}, conflict("client encryption key %q already exists in database %q", k.ID, dbID)
	case replace && !found:
		return EncryptionKeyInfo{}, notFound("client encryption key %q does not exist in database %q", k.ID, dbID)
	case replace && ifMatch != "" && ifMatch != "*" && ifMatch != cur.Etag():
		return EncryptionKeyInfo{}, fmt.Errorf("%w: the client encryption key's etag is %s, not %s", ErrPreconditionFailed, cur.Etag(), ifMatch)
	}
	if !replace {
		all, err := e.encryptionKeys(dbID)
		if err != nil {
			return EncryptionKeyInfo{}, err
		}
		if len(all) >= MaxEncryptionKeysPerDatabase {
			return EncryptionKeyInfo{}, fmt.Errorf("%w: database %q has %d client encryption keys, the limit", ErrQuotaExceeded, dbID, len(all))
		}
	}
	s, err := e.seq.take(1)
	if err != nil {
		return EncryptionKeyInfo{}, err
	}
	k.DB, k.Ts, k.Seq = dbID, e.now(), s
	if found {
		k.Rid = cur.Rid
	} else {
		dbRid, _ := decodeRid(db.info.Rid)
		k.Rid = encodeRid(binary.BigEndian.AppendUint32(dbRid, uint32(s)))
	}
	v, _ := json.Marshal(k)
	m := &catalogBatch{seq: s}
	m.set(storage.EncryptionKeyKey(dbID, k.ID), v)
	if err := e.commitCatalog(m, "store client encryption key"); err != nil {
		return EncryptionKeyInfo{}, err
	}
	return k, nil
}

// EncryptionKey returns a client encryption key of a database.
func (e *Engine) EncryptionKey(dbID, id string) (EncryptionKeyInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if _, ok := e.dbs[dbID]; !ok {
		return EncryptionKeyInfo{}, notFound("database %q does not exist", dbID)
	}
	k, found, err := e.encryptionKey(dbID, id)
	if err == nil && !found {
		err = notFound("client encryption key %q does not exist in database %q", id, dbID)
	}
	return k, err
}

// EncryptionKeys lists a database's client encryption keys, by id.
func (e *Engine) EncryptionKeys(dbID string) ([]EncryptionKeyInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if _, ok := e.dbs[dbID]; !ok {
		return nil, notFound("database %q does not exist", dbID)
	}
	return e.encryptionKeys(dbID)
}

func (e *Engine) encryptionKey(dbID, id string) (EncryptionKeyInfo, bool, error) {
	var k EncryptionKeyInfo
	v, err := e.store.Get(nil, storage.EncryptionKeyKey(dbID, id))
	if err == storage.ErrNotFound {
		return k, false, nil
	}
	if err != nil {
		return k, false, fmt.Errorf("%w: cannot read client encryption key: %v", ErrUnavailable, err)
	}
	if err := json.Unmarshal(v, &k); err != nil {
		return k, false, corrupt("client encryption key %q of database %q does not decode: %v", id, dbID, err)
	}
	return k, true, nil
}

func (e *Engine) encryptionKeys(dbID string) ([]EncryptionKeyInfo, error) {
	lo := storage.EncryptionKeyPrefix(dbID)
	var out []EncryptionKeyInfo
	err := e.store.Iterate(lo, storage.PrefixEnd(lo), func(key, v []byte) (bool, error) {
		var k EncryptionKeyInfo
		if err := json.Unmarshal(v, &k); err != nil {
			return false, corrupt("client encryption key record %q does not decode: %v", key, err)
		}
		out = append(out, k)
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
