package mongo

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The codes MongoDB 7.0 answers for refusals, with its messages where
// drivers or users match on them. Sources: error_codes.yml;
// projection_parser.cpp and field_path.cpp (projections); the IDL
// parsers of the commands (40414 for a missing required field, 14 for a
// field of the wrong type, 51024 for a negative count, as FerretDB's
// tests record them from MongoDB); create_indexes.cpp ("Must specify at
// least one index to create").
func TestErrorCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	find := func(proj bson.D) bson.D {
		return bson.D{{Key: "find", Value: "c"}, {Key: "projection", Value: proj}}
	}
	// A fractional $slice is taken as an integer, as mongod's numberInt.
	var got bson.D
	if err := db.Collection("c").FindOne(ctx, bson.D{}, options.FindOne().SetProjection(bson.D{{Key: "a", Value: bson.D{{Key: "$slice", Value: 1.5}}}})).Decode(&got); err != nil {
		t.Fatalf("$slice 1.5: %v", err)
	}
	if a, _ := lookupField(got, "a"); len(a.(bson.A)) != 1 {
		t.Fatalf("$slice 1.5: %v", got)
	}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int
		msg  string
	}{
		{"projection of $v", find(bson.D{{Key: "$v", Value: 1}}), 16410, "FieldPath field names may not start with '$'"},
		{"projection of an empty name", find(bson.D{{Key: "", Value: 1}}), 40352, "FieldPath cannot be constructed with empty string"},
		{"empty sub-projection", find(bson.D{{Key: "a", Value: bson.D{}}}), 51270, "An empty sub-projection is not a valid value"},
		{"nested $elemMatch", find(bson.D{{Key: "a.b", Value: bson.D{{Key: "$elemMatch", Value: bson.D{{Key: "x", Value: 1}}}}}}), 31275, "Cannot use $elemMatch projection on a nested field."},
		{"literal in an exclusion", find(bson.D{{Key: "a", Value: 0}, {Key: "b", Value: "x"}}), 31310, "in an exclusion projection"},
		{"expression in an exclusion", find(bson.D{{Key: "a", Value: 0}, {Key: "b", Value: bson.D{{Key: "$add", Value: bson.A{1, 2}}}}}), 31252, "Cannot use expression other than $meta in exclusion projection"},
		{"find $slice of a string", find(bson.D{{Key: "a", Value: bson.D{{Key: "$slice", Value: "x"}}}}), 28667, "Invalid $slice syntax."},
		{"find $slice of one argument", find(bson.D{{Key: "a", Value: bson.D{{Key: "$slice", Value: bson.A{1}}}}}), 28667, "but 1 were passed in."},
		{"negative skip", bson.D{{Key: "find", Value: "c"}, {Key: "skip", Value: -1}}, 51024, "BSON field 'skip' value must be >= 0, actual value '-1'"},
		{"negative limit", bson.D{{Key: "find", Value: "c"}, {Key: "limit", Value: -1}}, 51024, "BSON field 'limit' value must be >= 0, actual value '-1'"},
		{"negative batchSize", bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: -1}}, 51024, "BSON field 'batchSize' value must be >= 0, actual value '-1'"},
		{"negative cursor.batchSize", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: -1}}}}, 51024, "BSON field 'batchSize' value must be >= 0"},
		{"aggregate cursor not an object", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: "x"}}, 14, "cursor field must be missing or an object"},
		{"aggregate without pipeline", bson.D{{Key: "aggregate", Value: "c"}, {Key: "cursor", Value: bson.D{}}}, 40414, "BSON field 'aggregate.pipeline' is missing but a required field"},
		{"insert without documents", bson.D{{Key: "insert", Value: "c"}}, 40414, "BSON field 'insert.documents' is missing but a required field"},
		{"update without updates", bson.D{{Key: "update", Value: "c"}}, 40414, "BSON field 'update.updates' is missing but a required field"},
		{"delete with deletes of the wrong type", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: 1}}, 14, "BSON field 'delete.deletes' is the wrong type 'int', expected type 'array'"},
		{"distinct without key", bson.D{{Key: "distinct", Value: "c"}}, 40414, "BSON field 'distinct.key' is missing but a required field"},
		{"createIndexes without indexes", bson.D{{Key: "createIndexes", Value: "c"}}, 40414, "BSON field 'createIndexes.indexes' is missing but a required field"},
		{"createIndexes of no index", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{}}}, 2, "Must specify at least one index to create"},
		{"getMore without collection", bson.D{{Key: "getMore", Value: int64(1)}}, 40414, "BSON field 'getMore.collection' is missing but a required field"},
		{"getMore with a negative batchSize", bson.D{{Key: "getMore", Value: int64(1)}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: -1}}, 51024, "BSON field 'batchSize' value must be >= 0, actual value '-1'"},
		{"listCollections with a negative batchSize", bson.D{{Key: "listCollections", Value: 1}, {Key: "cursor", Value: bson.D{{Key: "batchSize", Value: -1}}}}, 51024, "BSON field 'batchSize' value must be >= 0"},
		{"getMore of an int", bson.D{{Key: "getMore", Value: int32(1)}, {Key: "collection", Value: "c"}}, 14, "BSON field 'getMore.getMore' is the wrong type 'int', expected type 'long'"},
		{"killCursors without cursors", bson.D{{Key: "killCursors", Value: "c"}}, 40414, "BSON field 'killCursors.cursors' is missing but a required field"},
	} {
		err := db.RunCommand(ctx, tc.cmd).Err()
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
}

// More of mongod's refusals: a hint that names no index (2, the query
// planner's "hint provided does not correspond to an existing index"), an
// _id that cannot be one (2, insert.cpp's messages), an empty collection
// name (73), listIndexes of no collection (26, list_indexes.cpp), an
// unknown explain verbosity (2, the IDL enumeration).
func TestErrorCodesQueries(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}}).Err(); err != nil {
		t.Fatal(err)
	}
	insert := func(id any) bson.D {
		return bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: id}}}}}
	}
	for _, tc := range []struct {
		name string
		cmd  bson.D
		code int
		msg  string
	}{
		{"find with a hint of no index", bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: "nope"}}, 2, "hint provided does not correspond to an existing index"},
		{"find with a hint of no key", bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: bson.D{{Key: "b", Value: 1}}}}, 2, "hint provided does not correspond to an existing index"},
		{"count with a hint of no index", bson.D{{Key: "count", Value: "c"}, {Key: "hint", Value: "nope"}}, 2, "hint provided does not correspond to an existing index"},
		{"array _id", insert(bson.A{1}), 2, "can't use an array for _id"},
		{"regex _id", insert(bson.Regex{Pattern: "x"}), 2, "can't use a regex for _id"},
		{"empty collection name", bson.D{{Key: "find", Value: ""}}, 73, "Invalid namespace specified 'd.'"},
		{"listIndexes of no collection", bson.D{{Key: "listIndexes", Value: "nope"}}, 26, "ns does not exist: d.nope"},
		{"explain verbosity", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, {Key: "verbosity", Value: "loud"}}, 2, "Enumeration value 'loud' for field 'explain.verbosity' is not a valid value."},
	} {
		err := db.RunCommand(ctx, tc.cmd).Err()
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
	// getMore names the cursor's collection (13, getmore_cmd.cpp's message).
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 2}}); err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Cursor struct {
			ID int64 `bson:"id"`
		} `bson:"cursor"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 1}}).Decode(&reply); err != nil || reply.Cursor.ID == 0 {
		t.Fatalf("find: %v %v", reply, err)
	}
	err := db.RunCommand(ctx, bson.D{{Key: "getMore", Value: reply.Cursor.ID}, {Key: "collection", Value: "other"}}).Err()
	if cmdCode(err) != 13 || !contains(err.Error(), "Requested getMore on namespace 'd.other', but cursor belongs to a different namespace d.c") {
		t.Errorf("getMore of another collection's cursor: %v", err)
	}
	for _, hint := range []any{"a_1", "_id_", bson.D{{Key: "a", Value: 1}}, bson.D{{Key: "$natural", Value: 1}}} {
		if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "hint", Value: hint}}).Err(); err != nil {
			t.Errorf("hint %v: %v", hint, err)
		}
	}
}

// A positional projection returns the first array element the query
// matched (MongoDB's "$ (projection)" reference: grades.$ of
// {grades: {$gte: 85}}), in find and findAndModify; one whose array the
// query does not name is 31277 (projection_parser.cpp).
func TestPositionalProjection(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	c := env.client.Database("d").Collection("students")
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "grades", Value: bson.A{80, 85, 90}}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "grades", Value: bson.D{{Key: "$gte", Value: 85}}}}
	proj := bson.D{{Key: "grades.$", Value: 1}}
	want := `{"_id":{"$numberInt":"1"},"grades":[{"$numberInt":"85"}]}`
	var got bson.D
	if err := c.FindOne(ctx, filter, options.FindOne().SetProjection(proj)).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("find: %v, want %s", got, want)
	}
	got = nil
	if err := c.FindOneAndUpdate(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.FindOneAndUpdate().SetProjection(proj)).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Fatalf("findAndModify: %v, want %s", got, want)
	}
	err := env.client.Database("d").RunCommand(ctx, bson.D{{Key: "find", Value: "students"}, {Key: "filter", Value: bson.D{{Key: "x", Value: 1}}}, {Key: "projection", Value: proj}}).Err()
	if cmdCode(err) != 31277 || !contains(err.Error(), "Positional projection 'grades.$' does not match the query document.") {
		t.Fatalf("a positional projection the query does not name: %v", err)
	}
}
