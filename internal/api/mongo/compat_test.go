package mongo

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readconcern"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// compatCase is a command and what MongoDB 7.0 answers to it: its code
// and a part of its message (code 0: success).
type compatCase struct {
	name string
	cmd  bson.D
	code int
	msg  string
}

func runCompatCases(t *testing.T, db *mongo.Database, cases []compatCase) {
	t.Helper()
	for _, tc := range cases {
		err := db.RunCommand(context.Background(), tc.cmd).Err()
		if tc.code == 0 {
			if err != nil {
				t.Errorf("%s: %v, want success", tc.name, err)
			}
			continue
		}
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %d %q", tc.name, err, tc.code, tc.msg)
		}
	}
}

// mongod parses find, aggregate, getMore, count, distinct, the writes,
// findAndModify, createIndexes, listCollections, listIndexes and
// killCursors with strict IDL parsers: a field that is neither theirs nor
// a generic argument (generic_argument.idl) is 40415, "BSON field
// 'find.foo' is an unknown field." (idl_parser.cpp), and so is one of an
// update's or delete's statements (write_ops.idl's UpdateOpEntry and
// DeleteOpEntry are strict). Generic arguments are accepted by all.
func TestUnknownFields(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	foo := bson.E{Key: "foo", Value: 1}
	var reply struct {
		Cursor struct {
			ID int64 `bson:"id"`
		} `bson:"cursor"`
	}
	if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 0}}).Decode(&reply); err != nil || reply.Cursor.ID == 0 {
		t.Fatalf("find: %v %v", reply, err)
	}
	upd := bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "b", Value: 1}}}}}}
	del := bson.D{{Key: "q", Value: bson.D{{Key: "_id", Value: 9}}}, {Key: "limit", Value: 1}}
	runCompatCases(t, db, []compatCase{
		{"find", bson.D{{Key: "find", Value: "c"}, foo}, 40415, "BSON field 'find.foo' is an unknown field."},
		{"aggregate", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, foo}, 40415, "BSON field 'aggregate.foo' is an unknown field."},
		{"getMore", bson.D{{Key: "getMore", Value: reply.Cursor.ID}, {Key: "collection", Value: "c"}, foo}, 40415, "BSON field 'getMore.foo' is an unknown field."},
		{"count", bson.D{{Key: "count", Value: "c"}, foo}, 40415, "BSON field 'count.foo' is an unknown field."},
		{"distinct", bson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}, foo}, 40415, "BSON field 'distinct.foo' is an unknown field."},
		{"insert", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, foo}, 40415, "BSON field 'insert.foo' is an unknown field."},
		{"update", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{upd}}, foo}, 40415, "BSON field 'update.foo' is an unknown field."},
		{"update statement", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{append(upd, foo)}}}, 40415, "BSON field 'update.updates.foo' is an unknown field."},
		{"delete", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{del}}, foo}, 40415, "BSON field 'delete.foo' is an unknown field."},
		{"delete statement", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{append(del, foo)}}}, 40415, "BSON field 'delete.deletes.foo' is an unknown field."},
		{"findAndModify", bson.D{{Key: "findAndModify", Value: "c"}, {Key: "remove", Value: true}, foo}, 40415, "BSON field 'findAndModify.foo' is an unknown field."},
		{"findandmodify", bson.D{{Key: "findandmodify", Value: "c"}, {Key: "remove", Value: true}, foo}, 40415, "BSON field 'findAndModify.foo' is an unknown field."},
		{"createIndexes", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}, {Key: "name", Value: "a_1"}}}}, foo}, 40415, "BSON field 'createIndexes.foo' is an unknown field."},
		{"listCollections", bson.D{{Key: "listCollections", Value: 1}, foo}, 40415, "BSON field 'listCollections.foo' is an unknown field."},
		{"listIndexes", bson.D{{Key: "listIndexes", Value: "c"}, foo}, 40415, "BSON field 'listIndexes.foo' is an unknown field."},
		{"killCursors", bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{}}, foo}, 40415, "BSON field 'killCursors.foo' is an unknown field."},
		// Generic arguments, and the commands' own optional fields.
		{"find with generic arguments", bson.D{{Key: "find", Value: "c"}, {Key: "comment", Value: "x"}, {Key: "readConcern", Value: bson.D{{Key: "level", Value: "local"}}}, {Key: "$readPreference", Value: bson.D{{Key: "mode", Value: "primary"}}}, {Key: "apiVersion", Value: "1"}, {Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}}, {Key: "let", Value: bson.D{}}, {Key: "allowDiskUse", Value: true}}, 0, ""},
		{"insert with writeConcern", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "writeConcern", Value: bson.D{{Key: "w", Value: 1}}}, {Key: "bypassDocumentValidation", Value: false}, {Key: "comment", Value: "x"}}, 0, ""},
		{"update with hint and collation", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{append(upd, bson.E{Key: "collation", Value: bson.D{{Key: "locale", Value: "simple"}}})}}, {Key: "let", Value: bson.D{}}}, 0, ""},
		{"hello with an unknown field", bson.D{{Key: "hello", Value: 1}, foo}, 0, ""},
	})
	// What the driver sends with its options passes.
	c := db.Collection("c", options.Collection().SetReadConcern(readconcern.Majority()).SetWriteConcern(writeconcern.W1()))
	if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: 1}}, bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}, options.UpdateOne().SetUpsert(true).SetComment("c")); err != nil {
		t.Errorf("driver update: %v", err)
	}
	if _, err := c.CountDocuments(ctx, bson.D{}, options.Count().SetComment("c").SetLimit(5)); err != nil {
		t.Errorf("driver count: %v", err)
	}
	if _, err := c.Find(ctx, bson.D{}, options.Find().SetComment("c").SetNoCursorTimeout(true).SetAllowPartialResults(true)); err != nil {
		t.Errorf("driver find: %v", err)
	}
}
