package mongo

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// createIndexes refuses what mongod refuses: an index that exists under
// another name (85 IndexOptionsConflict), a name in use for another key
// (86 IndexKeySpecsConflict) or with other options (85), and key values
// that are not non-zero numbers or index types (67 CannotCreateIndex,
// index_key_validate.cpp); the same index again is a no-op with the note
// "all indexes already exist" (index_catalog_impl.cpp, create_indexes.cpp).
func TestCreateIndexesValidation(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	create := func(specs ...bson.D) (bson.D, error) {
		a := bson.A{}
		for _, s := range specs {
			a = append(a, s)
		}
		var out bson.D
		err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: a}}).Decode(&out)
		return out, err
	}
	spec := func(name string, key bson.D, opts ...bson.E) bson.D {
		return append(bson.D{{Key: "key", Value: key}, {Key: "name", Value: name}}, opts...)
	}
	a1 := bson.D{{Key: "a", Value: 1}}
	if _, err := create(spec("a_1", a1)); err != nil {
		t.Fatal(err)
	}
	out, err := create(spec("a_1", a1))
	if err != nil || toMap(out)["note"] != "all indexes already exist" {
		t.Errorf("the same index again: %v, %v", out, err)
	}
	for _, tc := range []struct {
		name string
		spec bson.D
		code int
		msg  string
	}{
		{"same key, other name", spec("other", a1), 85, "Index already exists with a different name: a_1"},
		{"same name, other key", spec("a_1", bson.D{{Key: "b", Value: 1}}), 86, "An existing index has the same name as the requested index"},
		{"same name, other options", spec("a_1", a1, bson.E{Key: "sparse", Value: true}), 85, "An equivalent index already exists with the same name but different options"},
		{"_id under another name", spec("id", bson.D{{Key: "_id", Value: 1}}), 85, "Index already exists with a different name: _id_"},
		{"key value 0", spec("z", bson.D{{Key: "z", Value: 0}}), 67, "Values in the index key pattern cannot be 0."},
		{"key value true", spec("z", bson.D{{Key: "z", Value: true}}), 67, "Values in v:2 index key pattern cannot be of type bool. Only numbers > 0, numbers < 0, and strings are allowed."},
		{"unknown plugin", spec("z", bson.D{{Key: "z", Value: "foo"}}), 67, "Unknown index plugin 'foo'"},
		{"empty key", spec("z", bson.D{}), 67, "Index keys cannot be empty."},
		{"no key", bson.D{{Key: "name", Value: "z"}}, 9, "The 'key' field is a required property of an index specification"},
	} {
		_, err := create(tc.spec)
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
	// Another key, or the same key with other options, under another name
	// is a new index.
	if _, err := create(spec("b_1", bson.D{{Key: "b", Value: 1}}), spec("a_1_sparse", a1, bson.E{Key: "sparse", Value: true})); err != nil {
		t.Fatal(err)
	}
}

// Requests mongod refuses and their codes: a write of no statements (16
// InvalidLength, write_ops_parsers.cpp), a statement without its required
// fields, refused before any statement runs (the commands' IDL: 40414,
// 14; a delete limit other than 0 or 1 is 9), a negative count skip (51024),
// findAndModify's contradictory options (9, write_ops.cpp, in mongod's
// order), and a top-level '$' name in $set (52); a nested '$' name in an
// update path is a field like any other (MongoDB's "Dollar-Prefixed Field
// Names": document modifying updates).
func TestWriteValidation(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.D{}}}); err != nil {
		t.Fatal(err)
	}
	set := func(path string) bson.D {
		return bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 1}}},
			{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: path, Value: 5}}}}}}}}}
	}
	fam := func(opts ...bson.E) bson.D { return append(bson.D{{Key: "findAndModify", Value: "c"}}, opts...) }
	upd := bson.E{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}
	remove := bson.E{Key: "remove", Value: true}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int
		msg  string
	}{
		{"insert of nothing", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{}}}, 16, "Write batch sizes must be between 1 and 100000. Got 0 operations."},
		{"update of nothing", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{}}}, 16, "Write batch sizes must be between 1 and 100000."},
		{"delete of nothing", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{}}}, 16, "Write batch sizes must be between 1 and 100000."},
		{"update without q", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "u", Value: bson.D{}}}}}}, 40414, "BSON field 'update.updates.q' is missing but a required field"},
		{"update with a q of the wrong type", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: 1}, {Key: "u", Value: bson.D{}}}}}}, 14, "BSON field 'update.updates.q' is the wrong type 'int', expected type 'object'"},
		{"delete without limit", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}}}}}, 40414, "BSON field 'delete.deletes.limit' is missing but a required field"},
		{"delete with limit 2", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 2}}}}}, 9, "The limit field in delete objects must be 0 or 1. Got 2"},
		{"count with a negative skip", bson.D{{Key: "count", Value: "c"}, {Key: "skip", Value: -1}}, 51024, "BSON field 'skip' value must be >= 0, actual value '-1'"},
		{"findAndModify of nothing", fam(), 9, "Either an update or remove=true must be specified"},
		{"findAndModify update and remove", fam(remove, upd), 9, "Cannot specify both an update and remove=true"},
		{"findAndModify remove and upsert", fam(remove, bson.E{Key: "upsert", Value: true}), 9, "Cannot specify both upsert=true and remove=true"},
		{"findAndModify remove and new", fam(remove, bson.E{Key: "new", Value: true}), 9, "Cannot specify both new=true and remove=true; 'remove' always returns the deleted document"},
		{"$set of a top-level $ name", set("$x"), 52, "The dollar ($) prefixed field '$x' in '$x'"},
	} {
		err := db.RunCommand(ctx, tc.cmd).Err()
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
	if err := db.RunCommand(ctx, set("a.$x")).Err(); err != nil {
		t.Fatalf("$set of a nested $ name: %v", err)
	}
	var got bson.D
	if err := db.Collection("c").FindOne(ctx, bson.D{{Key: "a.$x", Value: 5}}).Decode(&got); err != nil {
		t.Fatalf("find a.$x: %v", err)
	}
}
