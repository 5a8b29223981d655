package mongo

import (
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
)

// Unique indexes are enforced with guard items: for each unique index and
// each document, an item in the document's logical partition whose id is
// the index's name and the document's key values. A write creates, moves
// or deletes the guards in one atomic engine batch with the document, so
// two documents with the same key cannot both be written, whatever the
// concurrency. Guards are skipped by every read.
//
// As in Cosmos, uniqueness holds within a logical partition: on a sharded
// collection a unique index must contain the shard key, which makes that
// the same as uniqueness over the collection. A unique index is only
// created on an empty collection (as Cosmos requires), so every document
// has its guards.

// guardField marks a guard item; guardOf names the document it guards.
const (
	guardField = "~uniqueGuard"
	guardOf    = "~of"
)

type uniqueIndex struct {
	name   string
	fields []string
}

// uniques returns the collection's unique indexes.
func (col *coll) uniques() []uniqueIndex {
	var out []uniqueIndex
	for _, ix := range col.indexes() {
		u, _ := lookupField(ix, "unique")
		if !truthy(u) {
			continue
		}
		name, _ := lookupField(ix, "name")
		key, _ := lookupField(ix, "key")
		n, _ := name.(string)
		kd, _ := key.(bson.D)
		var fields []string
		for _, e := range kd {
			fields = append(fields, e.Key)
		}
		out = append(out, uniqueIndex{name: n, fields: fields})
	}
	return out
}

// isGuard reports whether a decoded item is a guard.
func isGuard(d bson.D) bool {
	for _, e := range d {
		if e.Key == guardField {
			return true
		}
	}
	return false
}

// guardID is the item id of d's guard for index u.
func guardID(u uniqueIndex, d bson.D) (string, error) {
	parts := make([]string, len(u.fields))
	for i, f := range u.fields {
		v, ok := lookupField(d, f)
		if !ok {
			v = nil // a missing field indexes as null, as in MongoDB
		}
		if _, isArr := v.(bson.A); isArr {
			return "", badValue("the unique index %q cannot index the array in field %q (multikey unique indexes are not supported)", u.name, f)
		}
		s, err := idString(v)
		if err != nil {
			return "", badValue("the unique index %q cannot index field %q: %v", u.name, f, err)
		}
		// idString leaves no bare '%', so escaping ',' keeps this injective.
		parts[i] = strings.ReplaceAll(s, ",", "%2C")
	}
	id := "~u:" + escapeID(u.name) + ":" + strings.Join(parts, ",")
	if len(id) > engine.MaxIDBytes {
		return "", badValue("the key of unique index %q is too long (%d bytes as an item id; the limit is %d)", u.name, len(id), engine.MaxIDBytes)
	}
	return id, nil
}

// guardCreate prepares the creation of d's guard for u.
func (col *coll) guardCreate(u uniqueIndex, d bson.D, gid, docID string) (engine.Op, error) {
	g := bson.D{{Key: guardField, Value: u.name}, {Key: guardOf, Value: docID}}
	if col.shard != "" {
		// The guard lives in the document's logical partition.
		if v, ok := lookupField(d, col.shard); ok {
			g = append(g, nestField(col.shard, v)...)
		}
	}
	raw, err := bson.Marshal(g)
	if err != nil {
		return engine.Op{}, badValue("cannot encode a unique index entry: %v", err)
	}
	body, key, err := col.encode(d, raw, gid)
	if err != nil {
		return engine.Op{}, err
	}
	op, err := col.c.PrepareWrite(engine.OpCreate, body, key, col.shard != "")
	if err != nil {
		return engine.Op{}, toCmdError(err)
	}
	return op, nil
}

// nestField returns {a: {b: v}} for the path a.b.
func nestField(path string, v any) bson.D {
	head, rest, more := strings.Cut(path, ".")
	if !more {
		return bson.D{{Key: head, Value: v}}
	}
	return bson.D{{Key: head, Value: nestField(rest, v)}}
}

// guardDelete prepares the deletion of the guard gid of document d.
func (col *coll) guardDelete(d bson.D, gid string) (engine.Op, error) {
	key, err := col.keyOf(d)
	if err != nil {
		return engine.Op{}, err
	}
	op, err := col.c.PrepareKeyed(engine.OpDelete, gid, key, col.shard != "")
	if err != nil {
		return engine.Op{}, toCmdError(err)
	}
	return op, nil
}

// guardChanges returns the guard operations of a write that turns old
// into upd (old nil: an insert; upd nil: a delete), and for each operation
// the index it belongs to.
func (col *coll) guardChanges(old, upd bson.D, docID string) ([]engine.Op, []string, error) {
	var ops []engine.Op
	var names []string
	for _, u := range col.uniques() {
		var before, after string
		var err error
		if old != nil {
			if before, err = guardID(u, old); err != nil {
				return nil, nil, err
			}
		}
		if upd != nil {
			if after, err = guardID(u, upd); err != nil {
				return nil, nil, err
			}
		}
		if before == after {
			continue
		}
		if before != "" {
			op, err := col.guardDelete(old, before)
			if err != nil {
				return nil, nil, err
			}
			ops, names = append(ops, op), append(names, "")
		}
		if after != "" {
			op, err := col.guardCreate(u, upd, after, docID)
			if err != nil {
				return nil, nil, err
			}
			ops, names = append(ops, op), append(names, u.name)
		}
	}
	return ops, names, nil
}

// execGuarded runs a document's operation with its guard operations in one
// atomic batch. A guard that cannot be created is a duplicate key on its
// index; a guard to delete that is missing is left out and the batch
// retried (an item written around the MongoDB API has none).
func (col *coll) execGuarded(op engine.Op, guards []engine.Op, names []string, d bson.D) error {
	for {
		ops := append([]engine.Op{op}, guards...)
		res, _, err := col.execute(&engine.Command{Ops: ops, Atomic: len(ops) > 1})
		if err != nil {
			return err
		}
		failed := -1
		for i, r := range res {
			if r.Err != nil && !errors.Is(r.Err, engine.ErrFailedDependency) {
				failed = i
				break
			}
		}
		if failed <= 0 {
			if failed == 0 {
				return res[0].Err
			}
			return nil
		}
		g := guards[failed-1]
		switch {
		case g.Kind == engine.OpCreate && errors.Is(res[failed].Err, engine.ErrConflict):
			return newErr(codeDuplicateKey, "DuplicateKey", "E11000 duplicate key error collection: %s index: %s dup key: %s", col.ns(), names[failed-1], showKey(col, names[failed-1], d))
		case g.Kind == engine.OpDelete && errors.Is(res[failed].Err, engine.ErrNotFound):
			guards = append(guards[:failed-1:failed-1], guards[failed:]...)
			names = append(names[:failed-1:failed-1], names[failed:]...)
		default:
			return res[failed].Err
		}
	}
}

// showKey renders d's values for the fields of the named unique index.
func showKey(col *coll, name string, d bson.D) string {
	for _, u := range col.uniques() {
		if u.name != name {
			continue
		}
		out := bson.D{}
		for _, f := range u.fields {
			v, _ := lookupField(d, f)
			out = append(out, bson.E{Key: f, Value: v})
		}
		return showValue(out)
	}
	return "{}"
}

// dropGuards deletes the guards of a unique index being dropped.
func (col *coll) dropGuards(name string) error {
	sc := col.scan(nil)
	sc.guards = true
	for {
		d, ok, err := sc.next()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		if n, _ := lookupField(d, guardField); n != name {
			continue
		}
		gid, _ := lookupField(d, "_id")
		id, _ := gid.(string)
		op, err := col.guardDelete(d, id)
		if err != nil {
			return err
		}
		if _, err := col.exec(op); err != nil && !errors.Is(err, engine.ErrNotFound) {
			return toCmdError(err)
		}
	}
}
