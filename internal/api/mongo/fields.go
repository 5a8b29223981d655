package mongo

import "go.mongodb.org/mongo-driver/v2/bson"

// Unknown fields. mongod parses most commands with IDL parsers that are
// strict: a field that is neither the command's own nor one of the
// generic arguments every command accepts is code 40415, "BSON field
// '<command>.<field>' is an unknown field." (idl_parser.cpp). Commands
// parsed by hand (hello, dbStats, create, ...) ignore unknown fields, and
// so does Parsec for them.

// genericArgs are the fields every command accepts (mongod's
// generic_argument.idl, the API version 1 and the unstable lists).
var genericArgs = fieldSet(
	"apiVersion", "apiStrict", "apiDeprecationErrors", "$db", "maxTimeMS", "readConcern",
	"writeConcern", "lsid", "clientOperationKey", "txnNumber", "autocommit", "startTransaction",
	"stmtId", "comment", "$readPreference", "$clusterTime",
	"$audit", "$client", "$configServerState", "allowImplicitCollectionCreation", "$oplogQueryData",
	"$queryOptions", "$replData", "databaseVersion", "shardVersion", "tracking_info", "coordinator",
	"maxTimeMSOpOnly", "$configTime", "$topologyTime", "txnRetryCounter", "mayBypassWriteBlocking",
	"$tenant", "expectPrefix",
)

// writeCommandBase are the fields insert, update and delete share
// (write_ops.idl's WriteCommandBase).
var writeCommandBase = []string{
	"bypassDocumentValidation", "ordered", "stmtIds", "isTimeseriesNamespace", "collectionUUID",
	"encryptionInformation", "originalQuery", "originalCollation",
}

// strictFields are the fields of each strict command, its name first, as
// its IDL definition lists them (find_command.idl, aggregate_command.idl,
// getmore_command.idl, count_command.idl, distinct_command.idl,
// write_ops.idl, find_and_modify.idl, create_indexes.idl,
// list_collections.idl, list_indexes.idl, kill_cursors.idl,
// explain.idl; the command explain describes is parsed by its own), keyed by
// the name a request may use.
var strictFields = map[string]map[string]bool{
	"find": fieldSet("find", "filter", "projection", "sort", "hint", "skip", "limit", "batchSize",
		"singleBatch", "max", "min", "returnKey", "showRecordId", "tailable", "oplogReplay",
		"noCursorTimeout", "awaitData", "allowPartialResults", "collation", "allowDiskUse", "let",
		"runtimeConstants", "readOnce", "allowSpeculativeMajorityRead", "$_requestResumeToken",
		"$_resumeAfter", "$_startAt", "term", "ntoreturn", "encryptionInformation",
		"includeQueryStatsMetrics"),
	"aggregate": fieldSet("aggregate", "pipeline", "explain", "allowDiskUse", "cursor",
		"bypassDocumentValidation", "collation", "hint", "let", "needsMerge", "fromMongos", "fromRouter",
		"$_requestReshardingResumeToken", "isMapReduceCommand", "collectionUUID", "exchange",
		"runtimeConstants", "passthroughToShard", "$_passthroughToShard", "encryptionInformation",
		"$_generateV2ResumeTokens", "isClusterQueryWithoutShardKeyCmd", "includeQueryStatsMetrics"),
	"getMore": fieldSet("getMore", "collection", "batchSize", "term", "lastKnownCommittedOpTime",
		"includeQueryStatsMetrics"),
	"count": fieldSet("count", "query", "limit", "skip", "hint", "collation", "fields",
		"encryptionInformation", "mirrored", "sampleId"),
	"distinct": fieldSet("distinct", "key", "query", "collation", "hint", "mirrored", "sampleId"),
	"insert":   fieldSet(append([]string{"insert", "documents"}, writeCommandBase...)...),
	"update":   fieldSet(append([]string{"update", "updates", "let", "runtimeConstants"}, writeCommandBase...)...),
	"delete":   fieldSet(append([]string{"delete", "deletes", "let", "runtimeConstants"}, writeCommandBase...)...),
	"findAndModify": fieldSet("findAndModify", "query", "fields", "sort", "hint", "collation",
		"arrayFilters", "remove", "update", "new", "upsert", "bypassDocumentValidation", "let",
		"runtimeConstants", "encryptionInformation", "sampleId", "isTimeseriesNamespace",
		"$_allowShardKeyUpdatesWithoutFullShardKeyInQuery"),
	"createIndexes": fieldSet("createIndexes", "indexes", "commitQuorum", "ignoreUnknownIndexOptions",
		"isTimeseriesNamespace", "collectionUUID", "returnOnStart"),
	"listCollections": fieldSet("listCollections", "cursor", "filter", "nameOnly",
		"authorizedCollections", "includePendingDrops"),
	"listIndexes": fieldSet("listIndexes", "cursor", "includeBuildUUIDs", "includeIndexBuildInfo",
		"isTimeseriesNamespace", "collectionUUID"),
	"killCursors": fieldSet("killCursors", "cursors"),
	"explain":     fieldSet("explain", "verbosity"),
}

// statementFields are the fields of an update's and a delete's statements
// (write_ops.idl's UpdateOpEntry and DeleteOpEntry, both strict).
var statementFields = map[string]map[string]bool{
	"updates": fieldSet("q", "u", "c", "arrayFilters", "hint", "multi", "upsert", "upsertSupplied",
		"collation", "sampleId", "$_allowShardKeyUpdatesWithoutFullShardKeyInQuery"),
	"deletes": fieldSet("q", "limit", "hint", "collation", "sampleId"),
}

func init() {
	strictFields["findandmodify"] = strictFields["findAndModify"]
}

func fieldSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// unknownField is mongod's error for a field a strict parser does not
// know (code 40415); path is the command's name and the field's path.
func unknownField(path string) *cmdError {
	return newErr(40415, "Location40415", "BSON field '%s' is an unknown field.", path)
}

// checkFields refuses the first field of a strict command that it does
// not know, naming the command as mongod does (findAndModify for its
// lowercase alias too).
func (r *request) checkFields() error {
	known, strict := strictFields[r.name]
	if !strict {
		return nil
	}
	name := r.name
	if name == "findandmodify" {
		name = "findAndModify"
	}
	for _, e := range r.cmd[1:] {
		if !known[e.Key] && !genericArgs[e.Key] {
			return unknownField(name + "." + e.Key)
		}
		if want, ok := findFieldTypes[e.Key]; ok && name == "find" {
			if err := checkFieldType(name, e, want); err != nil {
				return err
			}
		}
		if want, ok := writeFieldTypes[e.Key]; ok && (name == "insert" || name == "update" || name == "delete") {
			if err := checkFieldType(name, e, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// findFieldTypes are the IDL types of find's boolean and object fields
// that Parsec reads or refuses (find_command.idl).
var findFieldTypes = map[string]string{"singleBatch": "bool", "tailable": "bool", "awaitData": "bool",
	"noCursorTimeout": "bool", "allowPartialResults": "bool", "returnKey": "bool", "showRecordId": "bool",
	"let": "object", "collation": "object", "min": "object", "max": "object"}

// checkTailable checks find's tailable options as mongod 7.0's
// query_request_helper::validateFindCommandRequest does (awaitData needs
// tailable, 9; tailable goes with neither singleBatch nor a sort other
// than {$natural: 1}, 2).
func (r *request) checkTailable(sort bson.D) error {
	tailable, awaitData := r.boolean("tailable"), r.boolean("awaitData")
	if tailable && len(sort) > 0 && !(len(sort) == 1 && sort[0].Key == "$natural" && numberValue(sort[0].Value) == 1) {
		return badValue("cannot use tailable option with a sort other than {$natural: 1}")
	}
	if tailable && r.boolean("singleBatch") {
		return badValue("cannot use tailable option with the 'singleBatch' option")
	}
	if awaitData && !tailable {
		return newErr(9, "FailedToParse", "Cannot set 'awaitData' without also setting 'tailable'")
	}
	return nil
}

// writeFieldTypes and statementFieldTypes are the IDL types (bool: only a
// boolean; object; array) of the write commands' and their statements'
// fields that Parsec reads (write_ops.idl).
var (
	writeFieldTypes     = map[string]string{"ordered": "bool", "let": "object"}
	statementFieldTypes = map[string]string{"multi": "bool", "upsert": "bool", "arrayFilters": "array", "collation": "object", "c": "object"}
)

// checkFieldType refuses a field whose value is not of the IDL type want,
// as the IDL parser does (14, naming the field's path).
func checkFieldType(prefix string, e bson.E, want string) error {
	ok := false
	switch want {
	case "bool":
		_, ok = e.Value.(bool)
	case "object":
		_, ok = e.Value.(bson.D)
	case "array":
		_, ok = e.Value.(bson.A)
	}
	if !ok {
		return wrongType(prefix, e.Key, e.Value, want)
	}
	return nil
}

// checkStatementFields refuses an update or delete statement's unknown
// field (prefix: "update.updates" or "delete.deletes").
func checkStatementFields(prefix, field string, st bson.D) error {
	known := statementFields[field]
	for _, e := range st {
		if !known[e.Key] {
			return unknownField(prefix + "." + e.Key)
		}
		if want, ok := statementFieldTypes[e.Key]; ok {
			if err := checkFieldType(prefix, e, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// handParsedNamespace are the commands whose collection mongod reads by
// hand (CommandHelpers::parseNsCollectionRequired): a name that is not a
// string is 73 InvalidNamespace there, and 2 BadValue for the commands
// IDL parses.
var handParsedNamespace = map[string]bool{"collStats": true, "collstats": true, "validate": true, "compact": true}

// rawValueOf decodes a raw value, for naming its type in an error.
func rawValueOf(v bson.RawValue) any {
	raw, err := bson.Marshal(bson.D{{Key: "v", Value: v}})
	if err != nil {
		return nil
	}
	var d bson.D
	if err := bson.Unmarshal(raw, &d); err != nil || len(d) != 1 {
		return nil
	}
	return d[0].Value
}

// elementNotObject is the IDL parser's error for the first element of an
// array<object> field that is not a document ("BSON field
// 'update.updates.1' is the wrong type 'int', expected type 'object'").
func elementNotObject(path string, a bson.A) error {
	for i, x := range a {
		if _, ok := x.(bson.D); !ok {
			return typeMismatch("BSON field '%s.%d' is the wrong type '%s', expected type 'object'", path, i, typeName(x))
		}
	}
	return typeMismatch("BSON field '%s' must be an array of objects", path)
}
