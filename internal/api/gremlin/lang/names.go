package lang

// The enum constants of the grammar, by class. Each member maps to the name
// the Token carries; aliases map to their canonical member (Order.incr and
// decr, the pre-3.5 names Cosmos DB users write, are asc and desc;
// Direction.from and to are OUT and IN as in TinkerPop).
var classTokens = map[string]map[string]string{
	"T":           set("id", "label", "key", "value"),
	"Order":       with(set("asc", "desc", "shuffle"), "incr", "asc", "decr", "desc"),
	"Scope":       set("local", "global"),
	"Column":      set("keys", "values"),
	"Cardinality": set("single", "set", "list"),
	"Pop":         set("first", "last", "all", "mixed"),
	"Operator":    set("addAll", "and", "assign", "div", "max", "min", "minus", "mult", "or", "sum", "sumLong"),
	"Direction":   with(set("IN", "OUT", "BOTH"), "from", "OUT", "to", "IN"),
	"Pick":        set("any", "none", "unproductive"),
	"Barrier":     set("normSack"),
	"Merge":       set("onCreate", "onMatch", "outV", "inV"),
	"DT":          set("second", "minute", "hour", "day"),
	"GType":       gtypes(),
	// Option keys and values of with() and io(); the evaluator resolves
	// them.
	"WithOptions":        set("tokens", "none", "ids", "labels", "keys", "values", "all", "indexer", "list", "map"),
	"IO":                 set("reader", "writer", "gryo", "graphson", "graphml"),
	"ConnectedComponent": set("component", "edges", "propertyName"),
	"PageRank":           set("edges", "times", "propertyName"),
	"PeerPressure":       set("edges", "times", "propertyName"),
	"ShortestPath":       set("target", "edges", "distance", "maxDistance", "includeEdges"),
}

// gtypeNames are GType's members; each is also written in the lower camel
// case of gtypeLower (GType.STRING, string).
var gtypeNames = []string{"BIGDECIMAL", "BIGINT", "BINARY", "BOOLEAN", "BYTE", "CHAR", "DATETIME", "DOUBLE",
	"DURATION", "EDGE", "FLOAT", "GRAPH", "INT", "LIST", "LONG", "MAP", "NULL", "NUMBER", "PATH", "PROPERTY",
	"SET", "SHORT", "STRING", "TREE", "UUID", "VERTEX", "VPROPERTY"}

var gtypeLower = []string{"bigDecimal", "bigInt", "binary", "boolean", "byte", "char", "datetime", "double",
	"duration", "edge", "float", "graph", "int", "list", "long", "map", "null", "number", "path", "property",
	"set", "short", "string", "tree", "uuid", "vertex", "vproperty"}

func gtypes() map[string]string {
	m := map[string]string{}
	for i, n := range gtypeNames {
		m[n] = n
		m[gtypeLower[i]] = n
	}
	return m
}

func set(names ...string) map[string]string {
	m := make(map[string]string, len(names))
	for _, n := range names {
		m[n] = n
	}
	return m
}

func with(m map[string]string, aliasPairs ...string) map[string]string {
	for i := 0; i+1 < len(aliasPairs); i += 2 {
		m[aliasPairs[i]] = aliasPairs[i+1]
	}
	return m
}

// bareTokens are the constants that may be written without their class, as
// the grammar allows (id, desc, local, keys, single, first, sum, OUT, any,
// normSack, onCreate, day, string, ...). Where a name belongs to two classes
// the grammar's first alternative wins: list and set are Cardinality, not
// GType; null is the null literal. A name followed by '(' is a step or a
// predicate, never a constant.
var bareTokens = func() map[string]Token {
	m := map[string]Token{}
	// Later entries do not override earlier ones: the order is the
	// grammar's order of alternatives in genericLiteral and the step rules.
	order := []string{"T", "Cardinality", "Direction", "Merge", "Pick", "DT", "GType",
		"Order", "Scope", "Column", "Pop", "Operator", "Barrier"}
	for _, class := range order {
		for member, canon := range classTokens[class] {
			if member == "null" {
				continue
			}
			if _, dup := m[member]; !dup {
				m[member] = Token{Type: class, Name: canon}
			}
		}
	}
	return m
}()

// Predicate methods, by class; Format writes each with its class.
var pMethods = set("eq", "neq", "lt", "lte", "gt", "gte", "inside", "outside", "between", "within", "without",
	"not", "typeOf")

var textPMethods = set("containing", "notContaining", "startingWith", "notStartingWith", "endingWith",
	"notEndingWith", "regex", "notRegex")

// predArity is the number of arguments each predicate takes; -1 is any.
var predArity = map[string]int{
	"eq": 1, "neq": 1, "lt": 1, "lte": 1, "gt": 1, "gte": 1, "inside": 2, "outside": 2, "between": 2,
	"within": -1, "without": -1, "not": 1, "typeOf": 1,
	"containing": 1, "notContaining": 1, "startingWith": 1, "notStartingWith": 1, "endingWith": 1,
	"notEndingWith": 1, "regex": 1, "notRegex": 1,
}

// terminalMethods end a script's traversal (Gremlin.g4
// traversalTerminalMethod).
var terminalMethods = set("explain", "iterate", "hasNext", "tryNext", "next", "toList", "toSet", "toBulkSet")

// modulators parameterize the step before them and do not count as
// operators (Cosmos DB: ".times(100) is a parameter to .repeat()").
var modulators = set("as", "by", "emit", "from", "option", "read", "times", "to", "until", "with", "write")
