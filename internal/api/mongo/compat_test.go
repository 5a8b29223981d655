package mongo

import (
	"context"
	"math"
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
// DeleteOpEntry are strict), and explain's and the command it explains;
// a write's fields of another type than their IDL type are 14.
// Generic arguments are accepted by all.
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
		{"explain", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}}}, foo}, 40415, "BSON field 'explain.foo' is an unknown field."},
		{"explain of find", bson.D{{Key: "explain", Value: bson.D{{Key: "find", Value: "c"}, foo}}}, 40415, "BSON field 'find.foo' is an unknown field."},
		// Fields of the wrong IDL type (write_ops.idl: ordered, multi and
		// upsert are bool, arrayFilters an array, let and collation objects).
		{"ordered 1", bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{}}}, {Key: "ordered", Value: 1}}, 14, "BSON field 'insert.ordered' is the wrong type 'int', expected type 'bool'"},
		{"update let 1", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{upd}}, {Key: "let", Value: 1}}, 14, "BSON field 'update.let' is the wrong type 'int', expected type 'object'"},
		{"upsert 1", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{append(upd, bson.E{Key: "upsert", Value: 1})}}}, 14, "BSON field 'update.updates.upsert' is the wrong type 'int', expected type 'bool'"},
		{"multi string", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{append(upd, bson.E{Key: "multi", Value: "yes"})}}}, 14, "BSON field 'update.updates.multi' is the wrong type 'string', expected type 'bool'"},
		{"arrayFilters object", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{append(upd, bson.E{Key: "arrayFilters", Value: bson.D{}})}}}, 14, "BSON field 'update.updates.arrayFilters' is the wrong type 'object', expected type 'array'"},
		{"delete collation string", bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{append(del, bson.E{Key: "collation", Value: "x"})}}}, 14, "BSON field 'delete.deletes.collation' is the wrong type 'string', expected type 'object'"},
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

// The codes of aggregate's stage specifications in MongoDB 7.0:
// $skip and $limit take a non-negative integral number
// (document_source_skip.cpp 5107200, document_source_limit.cpp 5107201,
// with BSONElement::parseIntegerElementToNonNegativeLong's reasons), and
// $limit is positive (15958); $sort is an object (15973,
// document_source_sort.cpp) of numbers or $meta (sort_pattern.cpp 17312);
// field names are field paths (field_path.cpp: 40352 empty, 15998 an
// empty part, 16410 a '$' part); an unknown stage is 40324
// (document_source.cpp).
func TestAggregateStageCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	agg := func(stage string, v any) bson.D {
		return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: stage, Value: v}}}}, {Key: "cursor", Value: bson.D{}}}
	}
	runCompatCases(t, db, []compatCase{
		{"$limit -1", agg("$limit", -1), 5107201, "invalid argument to $limit stage: Expected a non-negative number in: $limit: -1"},
		{"$limit 0", agg("$limit", 0), 15958, "the limit must be positive"},
		{"$limit 1.5", agg("$limit", 1.5), 5107201, "invalid argument to $limit stage: Expected an integer: $limit: 1.5"},
		{"$limit string", agg("$limit", "x"), 5107201, "invalid argument to $limit stage: Expected a number in: $limit:"},
		{"$limit NaN", agg("$limit", math.NaN()), 5107201, "invalid argument to $limit stage: Expected an integer, but found NaN in"},
		{"$limit 1e19", agg("$limit", 1e19), 5107201, "invalid argument to $limit stage: Cannot represent as a 64-bit integer"},
		{"$skip -1", agg("$skip", int64(-1)), 5107200, "invalid argument to $skip stage: Expected a non-negative number in: $skip: -1"},
		{"$skip 2.5", agg("$skip", 2.5), 5107200, "invalid argument to $skip stage: Expected an integer: $skip: 2.5"},
		{"$skip null", agg("$skip", nil), 5107200, "invalid argument to $skip stage: Expected a number in"},
		{"$skip 0", agg("$skip", 0), 0, ""},
		{"$limit 2.0", agg("$limit", 2.0), 0, ""},
		{"$sort not an object", agg("$sort", 1), 15973, "the $sort key specification must be an object"},
		{"$sort empty", agg("$sort", bson.D{}), 15976, "$sort stage must have at least one sort key"},
		{"$sort by a document", agg("$sort", bson.D{{Key: "a", Value: bson.D{{Key: "x", Value: 1}}}}), 17312, "$meta is the only expression supported by $sort right now"},
		{"$sort by a string", agg("$sort", bson.D{{Key: "a", Value: "x"}}), 15974, "Illegal key in $sort specification"},
		{"$sort by 2", agg("$sort", bson.D{{Key: "a", Value: 2}}), 15975, "$sort key ordering must be 1 (for ascending) or -1 (for descending)"},
		{"$sort of an empty name", agg("$sort", bson.D{{Key: "", Value: 1}}), 40352, "FieldPath cannot be constructed with empty string"},
		{"$sort of $a", agg("$sort", bson.D{{Key: "$a", Value: 1}}), 16410, "FieldPath field names may not start with '$'"},
		{"$addFields of an empty name", agg("$addFields", bson.D{{Key: "", Value: 1}}), 40352, "FieldPath cannot be constructed with empty string"},
		{"$addFields of a.$b", agg("$addFields", bson.D{{Key: "a.$b", Value: 1}}), 16410, "FieldPath field names may not start with '$'"},
		{"$set of a..b", agg("$set", bson.D{{Key: "a..b", Value: 1}}), 15998, "FieldPath field names may not be empty strings."},
		{"$addFields not an object", agg("$addFields", 1), 40272, "$addFields specification stage must be an object, got int"},
		{"$project not an object", agg("$project", 1), 15969, "$project specification must be an object"},
		{"$project empty", agg("$project", bson.D{}), 51272, "$project specification must have at least one field"},
		{"unknown stage", agg("$bogus", 1), 40324, "Unrecognized pipeline stage name: '$bogus'"},
	})
}

// A positional projection has its "$" at the end of the path: "a.$.b" is
// 31394, and $project has none (31324); both in projection_parser.cpp.
func TestPositionalPathCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{bson.D{{Key: "b", Value: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	filter := bson.D{{Key: "a.b", Value: 1}}
	runCompatCases(t, db, []compatCase{
		{"find a.$.b", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}, {Key: "projection", Value: bson.D{{Key: "a.$.b", Value: 1}}}}, 31394, "illegal to specify positional operator in the middle of a path"},
		{"findAndModify a.$.b", bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: filter}, {Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "x", Value: 1}}}}}, {Key: "fields", Value: bson.D{{Key: "a.$.b", Value: 1}}}}, 31394, "illegal to specify positional operator in the middle of a path"},
		{"$project a.$", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "a.$", Value: 1}}}}}}, {Key: "cursor", Value: bson.D{}}}, 31324, "Cannot use positional projection in aggregation projection"},
		{"$project a.$.b", bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$project", Value: bson.D{{Key: "a.$.b", Value: 1}}}}}}, {Key: "cursor", Value: bson.D{}}}, 31324, "Cannot use positional projection in aggregation projection"},
		{"find a.$", bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: filter}, {Key: "projection", Value: bson.D{{Key: "a.$", Value: 1}}}}, 0, ""},
	})
}

// createIndexes' index specifications in MongoDB 7.0
// (index_key_validate.cpp's validateIndexSpec and validateIndexSpecTTL,
// index_catalog_impl.cpp; FerretDB's tests record the same answers from
// MongoDB): key and name are required (9 FailedToParse, so a name is not
// generated), of their types (14), the name not empty (67); a TTL index's
// expireAfterSeconds is a number, not NaN, within an int32, not negative,
// on a single field (67 each); an index given twice in one command is 68;
// a field an index specification may not have is 197 (validateIndexSpecFieldNames),
// unless ignoreUnknownIndexOptions drops it; the name '*' is 2
// (create_indexes_cmd.cpp); an _id index is {_id: 1} (2) with no options
// but collation (197, validateIdIndexSpec).
func TestIndexSpecCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	db := env.client.Database("d")
	create := func(specs ...bson.D) bson.D {
		a := bson.A{}
		for _, s := range specs {
			a = append(a, s)
		}
		return bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: a}}
	}
	ttl := func(key bson.D, v any) bson.D {
		return bson.D{{Key: "key", Value: key}, {Key: "name", Value: "t"}, {Key: "expireAfterSeconds", Value: v}}
	}
	at := bson.D{{Key: "at", Value: 1}}
	runCompatCases(t, db, []compatCase{
		{"no name", create(bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}}), 9, "Error in specification {\"key\":{\"v\":1}} :: caused by :: The 'name' field is a required property of an index specification"},
		{"empty name", create(bson.D{{Key: "key", Value: at}, {Key: "name", Value: ""}}), 67, "index name cannot be empty"},
		{"name of a number", create(bson.D{{Key: "key", Value: at}, {Key: "name", Value: 1}}), 14, "The field 'name' must be a string, but got int"},
		{"key of a string", create(bson.D{{Key: "key", Value: "a"}, {Key: "name", Value: "a"}}), 14, "The field 'key' must be an object, but got string"},
		{"no key", create(bson.D{}), 9, "The 'key' field is a required property of an index specification"},
		{"ttl of a string", create(ttl(at, "1")), 67, "TTL index 'expireAfterSeconds' option must be numeric, but received a type of 'string"},
		{"ttl NaN", create(ttl(at, math.NaN())), 67, "TTL index 'expireAfterSeconds' option must not be NaN"},
		{"ttl negative", create(ttl(at, -1)), 67, "TTL index 'expireAfterSeconds' option cannot be less than 0"},
		{"ttl past int32", create(ttl(at, int64(1)<<31)), 67, "TTL index 'expireAfterSeconds' must be within the range of a 32-bit integer"},
		{"ttl compound", create(ttl(bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}}, 10)), 67, "TTL indexes are single-field indexes, compound indexes do not support TTL"},
		{"twice in one command", create(bson.D{{Key: "key", Value: at}, {Key: "name", Value: "x"}}, bson.D{{Key: "key", Value: at}, {Key: "name", Value: "x"}}), 68, "Identical index already exists: x"},
		{"unknown field", create(bson.D{{Key: "key", Value: bson.D{{Key: "u", Value: 1}}}, {Key: "bogus", Value: true}, {Key: "name", Value: "u_1"}}), 197, "The field 'bogus' is not valid for an index specification. Specification:"},
		{"unknown field ignored", append(create(bson.D{{Key: "key", Value: bson.D{{Key: "u", Value: 1}}}, {Key: "bogus", Value: true}, {Key: "name", Value: "u_1"}}), bson.E{Key: "ignoreUnknownIndexOptions", Value: true}), 0, ""},
		{"name *", create(bson.D{{Key: "key", Value: at}, {Key: "name", Value: "*"}}), 2, "The index name '*' is not valid."},
		{"_id descending", create(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: -1}}}, {Key: "name", Value: "_id_-1"}}), 2, "The field 'key' for an _id index must be {_id: 1}, but got"},
		{"unique _id", create(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}, {Key: "unique", Value: true}}), 197, "The field 'unique' is not valid for an _id index specification. Specification:"},
		{"_id_ again", create(bson.D{{Key: "key", Value: bson.D{{Key: "_id", Value: 1}}}, {Key: "name", Value: "_id_"}}), 0, ""},
		{"ttl of the largest int32", create(ttl(at, int32(math.MaxInt32))), 0, ""},
		{"ttl 1.5", create(bson.D{{Key: "key", Value: bson.D{{Key: "b", Value: 1}}}, {Key: "name", Value: "b"}, {Key: "expireAfterSeconds", Value: 1.5}}), 0, ""},
	})
}

// create's capped options as mongod 7.0 checks them (create.idl's types
// and size >= 1, 14 and 51024; create_command.cpp's 72 InvalidOptions for
// capped without size and size or max without capped; FerretDB's tests
// record the same answers from MongoDB). A valid capped collection is
// refused with 72 and not created, since Parsec cannot cap one.
func TestCappedCreate(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	create := func(opts ...bson.E) bson.D {
		return append(bson.D{{Key: "create", Value: "capped"}}, opts...)
	}
	runCompatCases(t, db, []compatCase{
		{"capped without size", create(bson.E{Key: "capped", Value: true}), 72, "the 'size' field is required when 'capped' is true"},
		{"capped with a null size", create(bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: nil}, bson.E{Key: "max", Value: 5}), 72, "the 'size' field is required when 'capped' is true"},
		{"size without capped", create(bson.E{Key: "size", Value: 4096}), 72, "the 'capped' field needs to be true when either the 'size' or 'max' fields are present"},
		{"size 0", create(bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: 0}), 51024, "BSON field 'size' value must be >= 1, actual value '0'"},
		{"size -500", create(bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: -500}), 51024, "BSON field 'size' value must be >= 1, actual value '-500'"},
		{"size of a string", create(bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: "foo"}), 14, "BSON field 'create.size' is the wrong type 'string', expected types '[long, int, decimal, double']"},
		{"max of a string", create(bson.E{Key: "capped", Value: true}, bson.E{Key: "size", Value: 500}, bson.E{Key: "max", Value: "foo"}), 14, "BSON field 'create.max' is the wrong type 'string'"},
		{"capped of a string", create(bson.E{Key: "capped", Value: "foo"}), 14, "BSON field 'create.capped' is the wrong type 'string', expected types '[bool, long, int, decimal, double']"},
		{"capped false", create(bson.E{Key: "capped", Value: false}), 0, ""},
	})
	err := db.CreateCollection(ctx, "logs", options.CreateCollection().SetCapped(true).SetSizeInBytes(4096))
	if cmdCode(err) != 72 || !contains(err.Error(), "capped collections are not supported") {
		t.Fatalf("capped create: %v", err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "logs"}})
	if err != nil || len(names) != 0 {
		t.Fatalf("the refused capped collection exists: %v %v", names, err)
	}
}

// Refusals whose code or message mongod 7.0 gives otherwise: a collection
// name that is not a string is 2 BadValue for the commands IDL parses
// (IDLParserContext::parseNSCollectionRequired) and 73 for those parsed by
// hand (collStats); an element of an array<object> or array<long> field of
// the wrong type is 14 naming its index, before anything is written;
// $collStats' storageStats.scale is an IDL field (14, 51024). FerretDB's
// tests record the createIndexes and $collStats answers from MongoDB.
func TestAuditedCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	collStats := func(scale any) bson.D {
		return bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$collStats", Value: bson.D{{Key: "storageStats", Value: bson.D{{Key: "scale", Value: scale}}}}}}}}, {Key: "cursor", Value: bson.D{}}}
	}
	runCompatCases(t, db, []compatCase{
		{"find of a number", bson.D{{Key: "find", Value: 42}}, 2, "collection name has invalid type int"},
		{"createIndexes of null", bson.D{{Key: "createIndexes", Value: nil}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "v", Value: 1}}}, {Key: "name", Value: "v_1"}}}}}, 2, "collection name has invalid type null"},
		{"dropIndexes of a number", bson.D{{Key: "dropIndexes", Value: 42}, {Key: "index", Value: "x"}}, 2, "collection name has invalid type int"},
		{"collStats of a number", bson.D{{Key: "collStats", Value: 42}}, 73, "collection name has invalid type int"},
		{"insert of a number", bson.D{{Key: "insert", Value: "new"}, {Key: "documents", Value: bson.A{bson.D{}, 1}}}, 14, "BSON field 'insert.documents.1' is the wrong type 'int', expected type 'object'"},
		{"update statement of a string", bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{"x"}}}, 14, "BSON field 'update.updates.0' is the wrong type 'string', expected type 'object'"},
		{"createIndexes of a string", bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{"invalid"}}}, 14, "BSON field 'createIndexes.indexes.0' is the wrong type 'string', expected type 'object'"},
		{"killCursors of an int", bson.D{{Key: "killCursors", Value: "c"}, {Key: "cursors", Value: bson.A{int64(5), int32(1)}}}, 14, "BSON field 'killCursors.cursors.1' is the wrong type 'int', expected type 'long'"},
		{"storageStats scale -1000", collStats(-1000), 51024, "BSON field 'scale' value must be >= 1, actual value '-1000'"},
		{"storageStats scale of a string", collStats("invalid"), 14, "BSON field '$collStats.storageStats.scale' is the wrong type 'string'"},
	})
	// The refused insert wrote nothing, not even its collection.
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: "new"}})
	if err != nil || len(names) != 0 {
		t.Fatalf("the refused insert created its collection: %v %v", names, err)
	}
}

// find's options as mongod 7.0 checks them: its boolean and object fields
// are of those types (find_command.idl, 14); awaitData needs tailable (9)
// and tailable goes with neither singleBatch nor a sort other than
// {$natural: 1} (2, query_request_helper.cpp); and a tailable cursor needs
// a capped collection, which Parsec does not have (2, get_executor.cpp),
// while one of a missing collection is empty.
func TestFindOptionCodes(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	if _, err := db.Collection("c").InsertOne(ctx, bson.D{{Key: "_id", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	find := func(opts ...bson.E) bson.D {
		return append(bson.D{{Key: "find", Value: "c"}}, opts...)
	}
	tailable := bson.E{Key: "tailable", Value: true}
	runCompatCases(t, db, []compatCase{
		{"singleBatch 1", find(bson.E{Key: "singleBatch", Value: 1}), 14, "BSON field 'find.singleBatch' is the wrong type 'int', expected type 'bool'"},
		{"noCursorTimeout string", find(bson.E{Key: "noCursorTimeout", Value: "x"}), 14, "BSON field 'find.noCursorTimeout' is the wrong type 'string', expected type 'bool'"},
		{"collation string", find(bson.E{Key: "collation", Value: "x"}), 14, "BSON field 'find.collation' is the wrong type 'string', expected type 'object'"},
		{"awaitData without tailable", find(bson.E{Key: "awaitData", Value: true}), 9, "Cannot set 'awaitData' without also setting 'tailable'"},
		{"tailable with singleBatch", find(tailable, bson.E{Key: "singleBatch", Value: true}), 2, "cannot use tailable option with the 'singleBatch' option"},
		{"tailable with a sort", find(tailable, bson.E{Key: "sort", Value: bson.D{{Key: "a", Value: 1}}}), 2, "cannot use tailable option with a sort other than {$natural: 1}"},
		{"tailable", find(tailable), 2, "tailable cursor requested on non capped collection"},
		{"tailable of a missing collection", bson.D{{Key: "find", Value: "nope"}, tailable}, 0, ""},
		{"singleBatch true", find(bson.E{Key: "singleBatch", Value: true}), 0, ""},
	})
}
