package mongo

import (
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// explainable names the commands explain describes, with the field that
// holds their filter.
var explainable = map[string]string{"find": "filter", "count": "query", "distinct": "query", "aggregate": ""}

// cmdExplain describes how a find, count, distinct or aggregate reads its
// collection (queryPlanner.winningPlan): IDHACK for a point read, COLLSCAN
// over the logical partitions a shard-key equality names or over every
// partition, or FETCH over IXSCAN when the filter uses the index
// (indexuse.go). With the executionStats or allPlansExecution verbosity it
// also runs the read and reports what it returned and examined.
func cmdExplain(r *request) (bson.D, error) {
	inner, err := r.doc("explain")
	if err != nil {
		return nil, err
	}
	if len(inner) == 0 {
		return nil, newErr(9, "FailedToParse", "explain needs the command to explain")
	}
	verbosity, err := r.str("verbosity")
	if err != nil {
		return nil, err
	}
	switch verbosity {
	case "":
		verbosity = "allPlansExecution"
	case "queryPlanner", "executionStats", "allPlansExecution":
	default:
		return nil, badValue("Enumeration value '%s' for field 'explain.verbosity' is not a valid value.", verbosity)
	}
	sub := &request{c: r.c, s: r.s, name: inner[0].Key, db: r.db, cmd: inner}
	field, ok := explainable[sub.name]
	if !ok {
		if _, known := commands[sub.name]; known {
			return nil, newErr(115, "CommandNotSupported", "explain describes find, count, distinct and aggregate, not %s", sub.name)
		}
		return nil, newErr(59, "CommandNotFound", "Explain failed due to unknown command: %s", sub.name)
	}
	if err := sub.checkFields(); err != nil {
		return nil, err
	}
	name, err := sub.collName()
	if err != nil {
		return nil, err
	}
	var raw bson.D
	if field != "" {
		raw, err = sub.doc(field)
	} else {
		raw, err = leadingMatch(sub)
	}
	if err != nil {
		return nil, err
	}
	f, err := parseFilter(raw)
	if err != nil {
		return nil, err
	}
	if raw == nil {
		raw = bson.D{}
	}
	ns := r.db + "." + name
	planner := bson.D{{Key: "namespace", Value: ns}, {Key: "parsedQuery", Value: raw}}
	col, err := r.s.openColl(r.db, name)
	if err != nil && !isNotFound(err) {
		return nil, err
	}
	if col == nil {
		planner = append(planner, bson.E{Key: "winningPlan", Value: bson.D{{Key: "stage", Value: "EOF"}}})
		return explainReply(planner, nil, inner), nil
	}
	sc, err := sub.scanFor(col, f, raw)
	if err != nil {
		return nil, err
	}
	planner = append(planner, bson.E{Key: "winningPlan", Value: col.planOf(sc, raw)}, bson.E{Key: "rejectedPlans", Value: bson.A{}})
	if verbosity == "queryPlanner" {
		return explainReply(planner, nil, inner), nil
	}
	start := time.Now()
	n, err := sc.count()
	if err != nil {
		return nil, err
	}
	if sub.name == "find" || sub.name == "count" {
		skip, _ := sub.integer("skip", 0)
		limit, _ := sub.integer("limit", 0)
		if n = max(n-max(skip, 0), 0); limit != 0 {
			n = min(n, max(limit, -limit))
		}
	}
	stats := bson.D{
		{Key: "executionSuccess", Value: true},
		{Key: "nReturned", Value: n},
		{Key: "executionTimeMillis", Value: time.Since(start).Milliseconds()},
		{Key: "totalKeysExamined", Value: int64(sc.stats.keysExamined)},
		{Key: "totalDocsExamined", Value: int64(sc.stats.docsExamined)},
	}
	return explainReply(planner, stats, inner), nil
}

func explainReply(planner, stats bson.D, inner bson.D) bson.D {
	out := bson.D{{Key: "explainVersion", Value: "1"}, {Key: "queryPlanner", Value: planner}}
	if stats != nil {
		out = append(out, bson.E{Key: "executionStats", Value: stats})
	}
	return append(out, bson.E{Key: "command", Value: inner})
}

// leadingMatch returns the filter of an aggregate's first stage when it is
// a $match.
func leadingMatch(r *request) (bson.D, error) {
	v, _ := r.get("pipeline")
	stages, ok := v.(bson.A)
	if !ok {
		return nil, typeMismatch("'pipeline' must be an array of documents")
	}
	if len(stages) > 0 {
		if st, ok := stages[0].(bson.D); ok && len(st) == 1 && st[0].Key == "$match" {
			m, _ := st[0].Value.(bson.D)
			return m, nil
		}
	}
	return nil, nil
}

// scanFor is scanRaw for a command, whose hint {$natural: ...} asks for a
// scan of the collection, without the index.
func (r *request) scanFor(col *coll, f *mql.Filter, raw bson.D) (*scanner, error) {
	if err := r.checkHint(col); err != nil {
		return nil, err
	}
	sc := col.scanRaw(f, raw)
	h, _ := r.get("hint")
	if d, ok := h.(bson.D); ok && len(d) == 1 && d[0].Key == "$natural" {
		sc.sc.index = nil
	}
	return sc, nil
}

// checkHint refuses a hint that names no index of the collection (by name
// or key pattern) and is not {$natural: ...}, as mongod's planner does
// (code 2).
func (r *request) checkHint(col *coll) error {
	h, ok := r.get("hint")
	if !ok {
		return nil
	}
	switch x := h.(type) {
	case string:
		for _, ix := range append([]bson.D{idIndex()}, col.indexes()...) {
			if n, _ := lookupField(ix, "name"); n == x {
				return nil
			}
		}
	case bson.D:
		if len(x) == 0 || len(x) == 1 && x[0].Key == "$natural" {
			return nil
		}
		for _, ix := range append([]bson.D{idIndex()}, col.indexes()...) {
			if k := asDoc(lookupFieldValue(ix, "key")); len(k) == len(x) && mql.Compare(k, x) == 0 {
				return nil
			}
		}
	default:
		return nil
	}
	return badValue("error processing query: ns=%s planner returned error :: caused by :: hint provided does not correspond to an existing index", col.ns())
}

// planOf describes how sc reads the collection.
func (col *coll) planOf(sc *scanner, raw bson.D) bson.D {
	s := sc.sc
	switch {
	case s.hasID:
		return bson.D{{Key: "stage", Value: "IDHACK"}}
	case s.keyed && col.shard != "":
		return bson.D{{Key: "stage", Value: "COLLSCAN"}, {Key: "filter", Value: raw}, {Key: "direction", Value: "forward"},
			{Key: "logicalPartitions", Value: int32(len(s.keys))}}
	case s.index != nil:
		name := "$**_1" // every path is indexed, as by a wildcard index
		for _, ix := range col.indexes() {
			k, _ := lookupField(ix, "key")
			if key, ok := k.(bson.D); ok && len(key) > 0 && key[0].Key == s.index.field {
				if n, ok := lookupField(ix, "name"); ok {
					name, _ = n.(string)
				}
				break
			}
		}
		return bson.D{{Key: "stage", Value: "FETCH"}, {Key: "filter", Value: raw}, {Key: "inputStage", Value: bson.D{
			{Key: "stage", Value: "IXSCAN"}, {Key: "keyPattern", Value: bson.D{{Key: s.index.field, Value: int32(1)}}},
			{Key: "indexName", Value: name}, {Key: "isMultiKey", Value: true}, {Key: "direction", Value: "forward"},
		}}}
	}
	return bson.D{{Key: "stage", Value: "COLLSCAN"}, {Key: "filter", Value: raw}, {Key: "direction", Value: "forward"}}
}
