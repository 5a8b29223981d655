package lang

// A Traversal is a chain of steps. A script's traversal starts at the source
// g (Anonymous false: its first step is a start step such as V, E, addV,
// inject); a nested one starts with __ or with a bare step inside another
// step's arguments (Anonymous true). A traversal from g inside a step's
// arguments is either Cosmos DB's addE('knows').to(g.V('mary')), which
// means __.V('mary') and is parsed as that anonymous traversal, or, when it
// has source steps or a terminal method (gremlin-lang's
// g.V(1).id().next()), a non-anonymous traversal as written: a terminated
// one stands for the value it computes. Bytecode requests decode into the same
// tree, so the evaluator sees one form whatever the client sent.
type Traversal struct {
	// Source holds the source steps written between g and the first start
	// step (withSideEffect, withStrategies, ...), in order.
	Source    []Step
	Steps     []Step
	Anonymous bool
	// Terminal is the terminal method that ended a script's traversal
	// (next, next(n), iterate, hasNext, tryNext, toSet, toBulkSet,
	// explain), or the zero Step when there is none. toList() is the
	// server's default and is not recorded. Anonymous traversals never have
	// one.
	Terminal Step
}

// A Step is one step as written: its name ("has", "out", "V", "by") and its
// arguments in order.
type Step struct {
	Name string
	Args []Value
}

// A Value is a step argument. Its dynamic type is one of:
//
//	nil, bool, int32, int64, float32, float64, string, *big.Int (a BigInteger
//	literal, suffix n), *big.Float (a BigDecimal literal, suffix m),
//	UUID (a UUID(...) literal or a UUID sent by the client),
//	time.Time (datetime(...)),
//	[]Value (a list literal [a, b]), Set (a set literal {a, b}),
//	*Map (a map literal [k: v]), *Traversal (a nested traversal),
//	P (a predicate), Token (an enum constant such as T.id or Order.desc),
//	Strategy (only as an argument of the source steps withStrategies and
//	withoutStrategies), CardinalityValue (Cardinality.single(31)).
//
// Integer literals without a suffix are int32 when they fit and int64
// otherwise; a suffix l/L makes int64, and d/D float64, f/F float32; a
// decimal literal without a suffix is float64 (Groovy's BigDecimal is not
// reproduced). Bindings are substituted at parse time with the value the
// request carried.
type Value = any

// A UUID is a UUID literal or a UUID received in a request, in canonical
// lower-case text form.
type UUID string

// A Set is a set literal; its elements are in the order written, duplicates
// removed.
type Set []Value

// A Map is a map literal: its entries in the order written.
type Map struct {
	Entries []MapEntry
}

// A MapEntry is one key and its value.
type MapEntry struct {
	Key, Value Value
}

// A P is a predicate: P.gt(3), within('a','b'), TextP.startingWith('x'),
// P.not(P.eq(1)), P.gt(1).and(P.lt(5)). Op is the method name as TinkerPop
// spells it ("eq", "neq", "lt", "lte", "gt", "gte", "inside", "outside",
// "between", "within", "without", "startingWith", "endingWith",
// "containing", "notStartingWith", "notEndingWith", "notContaining",
// "regex", "notRegex") or "and", "or", "not" for composed predicates, whose
// Args are then P values. within/without keep their arguments flattened:
// within(['a','b']) and within('a','b') both give Args ["a","b"].
type P struct {
	Op   string
	Args []Value
}

// A Token is an enum constant: its type as TinkerPop names it ("T",
// "Order", "Scope", "Column", "Cardinality", "Pop", "Operator", "Direction",
// "Pick", "Barrier", "Merge", "DT", "GType", and the option classes
// "WithOptions", "IO", "ConnectedComponent", "PageRank", "PeerPressure",
// "ShortestPath") and its name ("id", "label", "desc", "local", "keys",
// "single", "OUT", "STRING", ...). A bare constant written without its type
// (id, desc, local, keys, single, ...) is resolved to its type by the
// parser. Aliases are resolved to the name TinkerPop's enum has: Order.incr
// and decr (pre-3.5, written by Cosmos DB users) are asc and desc;
// Direction.from and to are OUT and IN; GType's lower-case spellings are its
// upper-case names.
type Token struct {
	Type, Name string
}

// A Strategy is a traversal strategy named in withStrategies or
// withoutStrategies: its class name as written (ReadOnlyStrategy,
// SubgraphStrategy, PartitionStrategy, ...) and its configuration entries
// (string keys) in the order written, nil when it has none.
type Strategy struct {
	Name   string
	Config *Map
}

// A CardinalityValue is a value with the cardinality it is to be written
// with, Cardinality.single(31) or bare list('a'), as mergeV/mergeE option
// maps use it ([age: single(31)]; TinkerPop's
// VertexProperty.Cardinality.single(value)). Cardinality is "single",
// "set" or "list".
type CardinalityValue struct {
	Cardinality string
	Value       Value
}
