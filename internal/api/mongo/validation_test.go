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
		{"no key", bson.D{{Key: "name", Value: "z"}}, 40414, "is missing but a required field"},
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
