package lang

import (
	"math"
	"math/big"
	"strings"
	"testing"
	"time"
)

func st(name string, args ...Value) Step { return Step{Name: name, Args: args} }

func root(steps ...Step) *Traversal { return &Traversal{Steps: steps} }

func anon(steps ...Step) *Traversal { return &Traversal{Anonymous: true, Steps: steps} }

func list(vs ...Value) []Value { return vs }

func tok(typ, name string) Token { return Token{Type: typ, Name: name} }

func bigInt(s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic("BUG: bad test number " + s)
	}
	return n
}

func bigDec(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, bigDecimalPrec, big.ToNearestEven)
	if err != nil {
		panic("BUG: bad test number " + s)
	}
	return f
}

// TestParseTrees checks whole trees for scripts from Cosmos DB's
// documentation and TinkerPop's, written out by hand.
func TestParseTrees(t *testing.T) {
	cases := []struct {
		script string
		want   *Traversal
	}{
		// Cosmos DB gremlin/partitioning.md: a vertex addressed by
		// [partition key, id].
		{`g.V(['USA', 'Seattle'])`, root(st("V", list("USA", "Seattle")))},
		{`g.V('vertex_id').has('partitionKey', 'partitionKey_value')`,
			root(st("V", "vertex_id"), st("has", "partitionKey", "partitionKey_value"))},
		{`g.V('id0', 'id1').has('pk', within('a', 'b'))`,
			root(st("V", "id0", "id1"), st("has", "pk", P{Op: "within", Args: list("a", "b")}))},
		// Cosmos DB quickstart (gremlin/quickstart-dotnet.md, -console.md).
		{`g.addV('person').property('id', 'thomas').property('firstName', 'Thomas').property('pk','pk')`,
			root(st("addV", "person"), st("property", "id", "thomas"), st("property", "firstName", "Thomas"),
				st("property", "pk", "pk"))},
		{`g.V('thomas').outE('knows').where(inV().has('id', 'mary'))`,
			root(st("V", "thomas"), st("outE", "knows"), st("where", anon(st("inV"), st("has", "id", "mary"))))},
		{`g.V(['surfboards', '68719518403']).addE('replaces').to(g.V(['surfboards', '68719518371']))`,
			root(st("V", list("surfboards", "68719518403")), st("addE", "replaces"),
				st("to", anon(st("V", list("surfboards", "68719518371")))))},
		{`g.addV('product').property('price', 285.55)`, root(st("addV", "product"), st("property", "price", 285.55))},
		{`g.V().hasLabel('person').order().by('firstName', decr)`,
			root(st("V"), st("hasLabel", "person"), st("order"), st("by", "firstName", tok("Order", "desc")))},
		{`g.V().hasLabel('person').has('age', gt(40))`,
			root(st("V"), st("hasLabel", "person"), st("has", "age", P{Op: "gt", Args: list(int32(40))}))},
		{`g.V().has('name', TextP.startingWith('Th'))`,
			root(st("V"), st("has", "name", P{Op: "startingWith", Args: list("Th")}))},
		// TinkerPop reference: repeat/times/emit/until.
		{`g.V(1).repeat(out()).times(2).emit().path().by('name')`,
			root(st("V", int32(1)), st("repeat", anon(st("out"))), st("times", int32(2)), st("emit"), st("path"),
				st("by", "name"))},
		{`g.V().repeat(__.out()).until(__.hasLabel('software'))`,
			root(st("V"), st("repeat", anon(st("out"))), st("until", anon(st("hasLabel", "software"))))},
		// choose/option with Pick.none, project/by, group/by.
		{`g.V().choose(values('age')).option(27, __.in()).option(none, identity())`,
			root(st("V"), st("choose", anon(st("values", "age"))), st("option", int32(27), anon(st("in"))),
				st("option", tok("Pick", "none"), anon(st("identity"))))},
		{`g.V().project('n','c').by('name').by(bothE().count())`,
			root(st("V"), st("project", "n", "c"), st("by", "name"), st("by", anon(st("bothE"), st("count"))))},
		{`g.V().group().by(label).by(values('name').fold())`,
			root(st("V"), st("group"), st("by", tok("T", "label")), st("by", anon(st("values", "name"), st("fold"))))},
		{`g.V().values('age').math('_ + 1')`, root(st("V"), st("values", "age"), st("math", "_ + 1"))},
		// Predicates: chained and/or flatten, negate wraps in not,
		// not(P) is a predicate, not(traversal) a step.
		{`g.V().has('age', P.gt(1).and(lt(5)).and(neq(3)))`,
			root(st("V"), st("has", "age", P{Op: "and", Args: list(
				P{Op: "gt", Args: list(int32(1))}, P{Op: "lt", Args: list(int32(5))}, P{Op: "neq", Args: list(int32(3))})}))},
		{`g.V().has('age', inside(1, 5).or(eq(9)).negate())`,
			root(st("V"), st("has", "age", P{Op: "not", Args: list(P{Op: "or", Args: list(
				P{Op: "inside", Args: list(int32(1), int32(5))}, P{Op: "eq", Args: list(int32(9))})})}))},
		{`g.V().where(not(within(['a', 'b']))).where(not(out('x')))`,
			root(st("V"), st("where", P{Op: "not", Args: list(P{Op: "within", Args: list("a", "b")})}),
				st("where", anon(st("not", anon(st("out", "x"))))))},
		// Source steps, strategies, terminal methods.
		{`g.withSideEffect('a', []).withStrategies(ReadOnlyStrategy, new SubgraphStrategy(vertices: __.hasLabel('person'))).V().iterate()`,
			&Traversal{
				Source: []Step{st("withSideEffect", "a", list()), st("withStrategies", Strategy{Name: "ReadOnlyStrategy"},
					Strategy{Name: "SubgraphStrategy", Config: &Map{Entries: []MapEntry{{Key: "vertices", Value: anon(st("hasLabel", "person"))}}}})},
				Steps:    []Step{st("V")},
				Terminal: st("iterate"),
			}},
		// Cosmos DB gremlin/partitioning.md writes the Java builder.
		{`g.withStrategies(PartitionStrategy.build().partitionKey('pk').readPartitions('a', 'b').create()).V()`,
			&Traversal{
				Source: []Step{st("withStrategies", Strategy{Name: "PartitionStrategy", Config: &Map{Entries: []MapEntry{
					{Key: "partitionKey", Value: "pk"}, {Key: "readPartitions", Value: list("a", "b")}}}})},
				Steps: []Step{st("V")},
			}},
		{`g.V().toList();`, root(st("V"))},
		{`g.V().count().next()`, &Traversal{Steps: []Step{st("V"), st("count")}, Terminal: st("next")}},
		{`g.V().next(2)`, &Traversal{Steps: []Step{st("V")}, Terminal: st("next", int32(2))}},
		{`g.V(g.V().has('name','marko').id().next())`,
			root(st("V", &Traversal{Steps: []Step{st("V"), st("has", "name", "marko"), st("id")}, Terminal: st("next")}))},
		// __ alone is the identity traversal.
		{`g.V().coalesce(__, out())`, root(st("V"), st("coalesce", anon(), anon(st("out"))))},
		// Enum constants, long and short, with Groovy's aliases.
		{`g.V().order().by('a', incr).by(T.id, Order.decr).by(label, shuffle)`,
			root(st("V"), st("order"), st("by", "a", tok("Order", "asc")), st("by", tok("T", "id"), tok("Order", "desc")),
				st("by", tok("T", "label"), tok("Order", "shuffle")))},
		{`g.V().property(list, 'x', 1).property(Cardinality.single, 'y', 2).select(first, 'a').select(Pop.all, 'b')`,
			root(st("V"), st("property", tok("Cardinality", "list"), "x", int32(1)),
				st("property", tok("Cardinality", "single"), "y", int32(2)), st("select", tok("Pop", "first"), "a"),
				st("select", tok("Pop", "all"), "b"))},
		{`g.V().count(local).sack(sum).by('w').select(keys).to(Direction.OUT).from(IN).unfold().asNumber(GType.INT)`,
			root(st("V"), st("count", tok("Scope", "local")), st("sack", tok("Operator", "sum")), st("by", "w"),
				st("select", tok("Column", "keys")), st("to", tok("Direction", "OUT")), st("from", tok("Direction", "IN")),
				st("unfold"), st("asNumber", tok("GType", "INT")))},
		// Maps: naked keys are strings, parenthesized keys are values.
		{`g.mergeV([(T.label): 'Dog', name: 'Max', 'age': 3]).option(onCreate, [:])`,
			root(st("mergeV", &Map{Entries: []MapEntry{{Key: tok("T", "label"), Value: "Dog"}, {Key: "name", Value: "Max"},
				{Key: "age", Value: int32(3)}}}), st("option", tok("Merge", "onCreate"), &Map{}))},
		{`g.inject({1, 2, 1}, [], 1..3, 3..1, null, true, false)`,
			root(st("inject", Set{int32(1), int32(2)}, list(), list(int32(1), int32(2), int32(3)),
				list(int32(3), int32(2), int32(1)), nil, true, false))},
		{`g.inject(UUID('123E4567-e89b-12d3-a456-426614174000'), datetime('2023-08-02T00:00:00Z'), datetime('2023-08-02'))`,
			root(st("inject", UUID("123e4567-e89b-12d3-a456-426614174000"), time.Date(2023, 8, 2, 0, 0, 0, 0, time.UTC),
				time.Date(2023, 8, 2, 0, 0, 0, 0, time.UTC)))},
		// The forms of TinkerPop's DatetimeHelper.parse.
		{`g.inject(datetime('2018-03-22T00:35:44.741+1600'), DateTime('2018-03-22t00:35:44.741+16:00:00'), datetime('2018-03'), datetime('2018-03-22T00:35'))`,
			root(st("inject", time.Date(2018, 3, 21, 8, 35, 44, 741e6, time.UTC), time.Date(2018, 3, 21, 8, 35, 44, 741e6, time.UTC),
				time.Date(2018, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2018, 3, 22, 0, 35, 0, 0, time.UTC)))},
		// Double-quoted strings and comments, several lines, trailing dot.
		{"g.V().\n  has(\"name\", \"marko\") // a comment\n  /* another */ .out()", root(st("V"), st("has", "name", "marko"), st("out"))},
	}
	for _, c := range cases {
		got, err := Parse(c.script, nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.script, err)
			continue
		}
		if !Equal(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.script, Format(got), Format(c.want))
		}
	}
}

// TestParseCanonical checks scripts against the canonical text of their
// tree. Format writes every type distinctly (1 int32, 1L int64, 1.0
// float64, 1.0f float32, 1n, 1m, T.id, P.gt, __.out), so equal text means
// an equal tree; TestParseTrees and TestLiterals pin Format's spelling.
func TestParseCanonical(t *testing.T) {
	cases := []struct{ script, want string }{
		{`g.V()`, `g.V()`},
		{`g.V().count()`, `g.V().count()`},
		{`g.E()`, `g.E()`},
		{`g.V('thomas').outE('knows').inV().hasLabel('person').outE('knows').inV().hasLabel('person')`,
			`g.V('thomas').outE('knows').inV().hasLabel('person').outE('knows').inV().hasLabel('person')`},
		{`g.V('thomas.1').out('knows').out('uses').out('runsos').group().by('name').by(count())`,
			`g.V('thomas.1').out('knows').out('uses').out('runsos').group().by('name').by(__.count())`},
		{`g.V().hasLabel('person').values('name')`, `g.V().hasLabel('person').values('name')`},
		{`g.V('person-1').drop()`, `g.V('person-1').drop()`},
		{`g.V('person-1').outE('knows').where(inV().hasId('person-2')).drop()`,
			`g.V('person-1').outE('knows').where(__.inV().hasId('person-2')).drop()`},
		{`g.V().has('age', between(25, 40))`, `g.V().has('age',P.between(25,40))`},
		{`g.V().has('age', outside(25, 40))`, `g.V().has('age',P.outside(25,40))`},
		{`g.V().has('name', TextP.notContaining('x')).has('b', endingWith('y')).has('c', regex('a.*'))`,
			`g.V().has('name',TextP.notContaining('x')).has('b',TextP.endingWith('y')).has('c',TextP.regex('a.*'))`},
		{`g.V().has('pk', without())`, `g.V().has('pk',P.without())`},
		{`g.V().executionProfile()`, `g.V().executionProfile()`},
		{`g.V().hasLabel('person').values('age').mean()`, `g.V().hasLabel('person').values('age').mean()`},
		{`g.V().outE().inV().path().by('name').by(label)`, `g.V().outE().inV().path().by('name').by(T.label)`},
		{`g.V().as('a').out().as('b').select('a','b').by('name')`, `g.V().as('a').out().as('b').select('a','b').by('name')`},
		{`g.V().local(out().limit(2))`, `g.V().local(__.out().limit(2))`},
		{`g.V().union(out(), __.in()).dedup()`, `g.V().union(__.out(),__.in()).dedup()`},
		{`g.V().optional(out('knows')).coalesce(values('nick'), constant('none'))`,
			`g.V().optional(__.out('knows')).coalesce(__.values('nick'),__.constant('none'))`},
		{`g.V().fold().unfold().sample(2).range(0, 5).limit(local, 1).tail(1)`,
			`g.V().fold().unfold().sample(2).range(0,5).limit(Scope.local,1).tail(1)`},
		{`g.V().properties('name').hasNot('x').properties().key()`,
			`g.V().properties('name').hasNot('x').properties().key()`},
		{`g.V().store('x').cap('x').tree()`, `g.V().store('x').cap('x').tree()`},
		{`g.V().and(out('a'), out('b')).or(__.out('c'), has('d'))`,
			`g.V().and(__.out('a'),__.out('b')).or(__.out('c'),__.has('d'))`},
		{`g.V().is(eq(1)).where('a', gt('b')).by('age')`, `g.V().is(P.eq(1)).where('a',P.gt('b')).by('age')`},
		{`g.V().valueMap(true).with(WithOptions.tokens, WithOptions.labels)`,
			`g.V().valueMap(true).with(WithOptions.tokens,WithOptions.labels)`},
		{`g.V().loops().sack().barrier(normSack)`, `g.V().loops().sack().barrier(Barrier.normSack)`},
		{`g.V().group().by(T.label).by(outE().values('weight').sum()).unfold().order().by(values, desc)`,
			`g.V().group().by(T.label).by(__.outE().values('weight').sum()).unfold().order().by(Column.values,Order.desc)`},
		{`g.V().choose(hasLabel('person'), out('created'), identity())`,
			`g.V().choose(__.hasLabel('person'),__.out('created'),__.identity())`},
		{`g.V().branch(values('name')).option('marko', values('age')).option(none, values('name'))`,
			`g.V().branch(__.values('name')).option('marko',__.values('age')).option(Pick.none,__.values('name'))`},
		{`g.V().dedup().by(id)`, `g.V().dedup().by(T.id)`},
		{`g.V().elementMap().select(Column.keys)`, `g.V().elementMap().select(Column.keys)`},
		{`g.V().hasId(within(1, 2L))`, `g.V().hasId(P.within(1,2L))`},
		{`g.V().has('d', gt(datetime('2020-01-01T10:00:00.5+02:00')))`, `g.V().has('d',P.gt(datetime('2020-01-01T08:00:00.5Z')))`},
		{`g.V().has('a', within([['x']]))`, `g.V().has('a',P.within([['x']]))`},
		{`g.V().has('a', within(['x'], 'y'))`, `g.V().has('a',P.within(['x'],'y'))`},
		{`g.inject(1).mergeE([(Direction.from): 1, (Direction.to): 2, (T.label): 'knows'])`,
			`g.inject(1).mergeE([(Direction.OUT):1,(Direction.IN):2,(T.label):'knows'])`},
		{`g.inject([1: 'a', 2L: 'b', 1.5: 'c', ('s'): 'd', ([1]): 'e', {2}: 'f', [:]: 'g', (OUT): 'h', T.key: 'i', id: 'j', true: 'k', NaN: 'l', Infinity: 'm'])`,
			`g.inject([1:'a',2L:'b',1.5:'c','s':'d',([1]):'e',({2}):'f',([:]):'g',(Direction.OUT):'h',(T.key):'i','id':'j','true':'k',NaN:'l',Infinity:'m'])`},
		{`g.mergeV([age: single(31), n: Cardinality.list([1])]).option(onMatch, [a: set('x')], single)`,
			`g.mergeV(['age':Cardinality.single(31),'n':Cardinality.list([1])]).option(Merge.onMatch,['a':Cardinality.set('x')],Cardinality.single)`},
		{`g.withSack(1.0f).withBulk(false).withPath().with('evaluationTimeout', 500L).V().sack(mult).by('w')`,
			`g.withSack(1.0f).withBulk(false).withPath().with('evaluationTimeout',500L).V().sack(Operator.mult).by('w')`},
		{`g.withoutStrategies(ReadOnlyStrategy, LazyBarrierStrategy).V()`, `g.withoutStrategies(ReadOnlyStrategy,LazyBarrierStrategy).V()`},
		{`g.withStrategies(new ReadOnlyStrategy()).V()`, `g.withStrategies(ReadOnlyStrategy).V()`},
		{`g.io('graph.xml').read().iterate()`, `g.io('graph.xml').read().iterate()`},
		{`g.inject(1,2).hasNext()`, `g.inject(1,2).hasNext()`},
		{`g.V().toSet()`, `g.V().toSet()`},
		{`g.addV('a').as('x').addV('b').addE('to').from('x')`, `g.addV('a').as('x').addV('b').addE('to').from('x')`},
		{`g.V(1).addE('knows').to(__.V(2)).property('w', 0.5d)`, `g.V(1).addE('knows').to(__.V(2)).property('w',0.5)`},
		{`g.V(1).addE('knows').to(g.V(2))`, `g.V(1).addE('knows').to(__.V(2))`},
		{`g.V(g.withSideEffect('a', 1).V(2))`, `g.V(g.withSideEffect('a',1).V(2))`},
		{`g.V().has('s', typeOf(GType.STRING)).has('n', typeOf('Integer'))`,
			`g.V().has('s',P.typeOf(GType.STRING)).has('n',P.typeOf('Integer'))`},
		{`g.V().asDate().dateAdd(DT.day, 1)`, `g.V().asDate().dateAdd(DT.day,1)`},
	}
	for _, c := range cases {
		got, err := Parse(c.script, nil, Limits{})
		if err != nil {
			t.Errorf("%s: %v", c.script, err)
			continue
		}
		if text := Format(got); text != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.script, text, c.want)
		}
	}
}

// TestLiterals pins the Value each literal becomes (ast.go's rules).
func TestLiterals(t *testing.T) {
	cases := []struct {
		lit  string
		want Value
	}{
		{"0", int32(0)}, {"7", int32(7)}, {"-7", int32(-7)}, {"+7", int32(7)},
		{"2147483647", int32(math.MaxInt32)}, {"-2147483648", int32(math.MinInt32)},
		{"2147483648", int64(2147483648)}, {"-2147483649", int64(-2147483649)},
		{"9223372036854775807", int64(math.MaxInt64)},
		{"9223372036854775808", bigInt("9223372036854775808")},
		{"1l", int64(1)}, {"1L", int64(1)}, {"-9223372036854775808L", int64(math.MinInt64)},
		{"1i", int32(1)}, {"1b", int32(1)}, {"-128b", int32(-128)}, {"1s", int32(1)}, {"32767S", int32(32767)},
		{"10n", bigInt("10")}, {"10N", bigInt("10")}, {"-123456789012345678901234567890n", bigInt("-123456789012345678901234567890")},
		{"0x1F", int32(31)}, {"0XffL", int64(255)}, {"0xFFFFFFFF", int64(4294967295)}, {"-0x10", int32(-16)},
		{"010", int32(8)}, {"0_7", int32(7)}, {"1_000_000", int32(1000000)},
		{"1.5", 1.5}, {"-1.5", -1.5}, {"2.0d", 2.0}, {"2D", 2.0}, {"1e3", 1000.0}, {"1.5E-3", 0.0015}, {"1e+2", 100.0},
		{"1.5f", float32(1.5)}, {"2F", float32(2)}, {"3.4e38f", float32(3.4e38)},
		{"1.0m", bigDec("1.0")}, {"0.1M", bigDec("0.1")}, {"5m", bigDec("5")}, {"-1.25e-10m", bigDec("-1.25e-10")}, {"1e400m", bigDec("1e400")}, {"1e-400m", bigDec("1e-400")},
		{"NaN", math.NaN()}, {"Infinity", math.Inf(1)}, {"-Infinity", math.Inf(-1)}, {"+Infinity", math.Inf(1)},
		{"true", true}, {"false", false}, {"null", nil},
		{"'a'", "a"}, {`"a"`, "a"}, {"''", ""}, {`""`, ""}, {`'it''s'`, nil}, // the last is not a literal: see below
		{`'it\'s'`, "it's"}, {`"say \"hi\""`, `say "hi"`}, {`'tab\there'`, "tab\there"},
		{`'\n\r\b\f\\'`, "\n\r\b\f\\"}, {`'\u00e9\uuu0041'`, "éA"}, {`'\uD83D\uDE00'`, "😀"}, {`'\uD83D'`, "\uFFFD"},
		{`'\0\101\7'`, "\x00A\x07"}, {`'\377'`, "ÿ"}, {`"$x \$y"`, "$x $y"}, {"'a\\\nb'", "ab"},
		{"'multi\nline'", "multi\nline"}, {"'日本'", "日本"},
	}
	for _, c := range cases {
		script := "g.inject(" + c.lit + ")"
		tr, err := Parse(script, nil, Limits{})
		if c.lit == `'it''s'` {
			// Groovy/Java have no doubled-quote escape: two strings.
			if err == nil {
				t.Errorf("%s: want a syntax error", c.lit)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.lit, err)
			continue
		}
		got := tr.Steps[0].Args[0]
		if !ValueEqual(got, c.want) {
			t.Errorf("%s: got %#v (%T), want %#v (%T)", c.lit, got, got, c.want, c.want)
		}
		back, err := Parse(Format(tr), nil, Limits{})
		if err != nil || !Equal(tr, back) {
			t.Errorf("%s: formats as %s, reads back as %v, %v", c.lit, Format(tr), back, err)
		}
	}
}

// TestParseErrors checks what Parse refuses, where, and what it says.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		script    string
		line, col int
		msg       string // a substring of the message
	}{
		{"", 1, 1, "empty script"},
		{"  // only a comment\n", 2, 1, "empty script"},
		{"V()", 1, 1, "expected a traversal starting with g"},
		{"g", 1, 2, "expected '.' and a start step"},
		{"g.", 1, 3, "expected a step name after '.', found end of script"},
		{"g.V(", 1, 5, "expected a value, found end of script"},
		{"g.V('a'", 1, 8, "expected ')' or ',' in the arguments of V(), found end of script"},
		{"g.V('a' 'b')", 1, 9, "expected ')' or ',' in the arguments of V(), found string 'b'"},
		{"g.V().out", 1, 10, "expected '(' after out, found end of script"},
		{"g.V().has('a',)", 1, 15, "expected a value, found ')'"},
		{"g.V(\n  'a',\n  )", 3, 3, "expected a value, found ')'"},
		{"g.V('abc", 1, 5, "unterminated string"},
		{"g.V(1.2.3)", 1, 8, "expected ')' or ','"},
		{"g.V(12abc)", 1, 5, "malformed number 12abc"},
		{"g.V(08)", 1, 5, "malformed octal number 08"},
		{"g.V(1_)", 1, 5, "malformed number"},
		{"g.V(128b)", 1, 5, "out of range for a byte"},
		{"g.V(2147483648i)", 1, 5, "out of range for an int"},
		{"g.V(9223372036854775808L)", 1, 5, "out of range for a long"},
		{"g.V(1e999)", 1, 5, "out of range for a double"},
		{"g.V(1e39f)", 1, 5, "out of range for a float"},
		{"g.V(1e401m)", 1, 5, "out of range for a BigDecimal literal"},
		{"g.V(1e-401m)", 1, 5, "out of range for a BigDecimal literal"},
		{`g.V('\q')`, 1, 6, `unknown escape sequence \q`},
		{`g.V('\u12')`, 1, 6, `malformed \u escape`},
		{"g.V(x)", 1, 5, "unknown identifier x"},
		{"g.V().has('age', Long.MAX_VALUE)", 1, 18, "unknown identifier Long"},
		{"g.V().filter{it.get().value('age') > 30}", 1, 13, "lambdas and closures are not supported"},
		{"g.V().filter({it.get()})", 1, 15, "unknown identifier it: lambdas and closures are not supported"},
		{"g.V().map(Lambda.function('it.get()'))", 1, 11, "lambdas and closures are not supported"},
		{"g.V().fold(0) {a,b -> a + b}", 1, 15, "lambdas and closures are not supported (after fold)"},
		{"g.V().filter{x -> x}", 1, 13, "lambdas and closures are not supported"},
		{"g.V().has('a', 1 == 1)", 1, 18, "unexpected '=='"},
		{"g.V().has('a', 1 + 1)", 1, 18, "arithmetic is not part"},
		{"x = g.V()", 1, 1, "variable assignment is not supported"},
		{"def v = g.V(1).next(); g.V(v)", 1, 1, "variable assignment is not supported"},
		{"g.V(); g.E()", 1, 8, "only one statement is supported"},
		{"g.V()\ng.E()", 2, 1, "only one statement is supported"},
		{"g.V())", 1, 6, "expected end of script after the traversal, found ')'"},
		{"g.tx().commit()", 1, 3, "transactions (g.tx()) are not supported"},
		{"g.withSideEffect('a', 1)", 1, 25, "after the source steps, found end of script"},
		{"g.toList()", 1, 3, "expected a start step (V, E, addV, addE, inject, ...) before the terminal method toList()"},
		{"g.V().next().out()", 1, 13, "nothing may follow the terminal method next()"},
		{"g.V().count().toString()", 1, 15, "toString() is not supported"},
		{"g.V().next('a')", 1, 7, "next() takes an integer count"},
		{"g.V().iterate(1)", 1, 7, "the terminal method iterate() takes no arguments"},
		{"g.V().where(__.out().next())", 1, 22, "the terminal method next() may only end the whole script"},
		{"g.V().where(iterate())", 1, 13, "the terminal method iterate() may only end the whole script"},
		{"g.V().has('a', P.foo(1))", 1, 18, "unknown predicate P.foo"},
		{"g.V().has('a', TextP.gt(1))", 1, 22, "unknown predicate TextP.gt"},
		{"g.V().order().by('a', Order.up)", 1, 29, "unknown constant Order.up"},
		{"g.V().has('a', between(1))", 1, 16, "the predicate between() takes 2 arguments, got 1"},
		{"g.V().has('a', gt())", 1, 16, "the predicate gt() takes 1 argument, got 0"},
		{"g.V().has('a', startingWith(1))", 1, 16, "the predicate startingWith() takes a string"},
		{"g.V().has('a', P.not(out()))", 1, 18, "the predicate not() takes a predicate"},
		{"g.V().has('a', gt(1).and(2))", 1, 22, "and() takes a predicate"},
		{"g.V().has('a', gt(1).xor(lt(2)))", 1, 22, "expected and(), or() or negate() after a predicate"},
		{"g.V().has('a', typeOf(1))", 1, 16, "typeOf() takes a GType or a type name"},
		{"g.V().property('a', single('x', 'y'))", 1, 21, "single() takes one value"},
		{"g.V().property('a', Cardinality.list())", 1, 33, "list() takes one value"},
		// Gremlin.g4's mapKey admits strings, numbers, T and Direction
		// constants and collections; TinkerPop's
		// incorrect-gremlin-values.txt lists [Scope.local: 100].
		{"g.inject([Scope.local: 100])", 1, 11, "a map key must be a string, a number, a T or Direction constant"},
		{"g.inject([a: 1, (null): 2])", 1, 17, "not null"},
		{"g.inject([a: 1, (Order.asc): 2])", 1, 17, "not Order.asc"},
		{"g.inject(datetime())", 1, 10, "the current time, datetime(), is not supported"},
		{"g.inject(datetime('yesterday'))", 1, 10, `cannot parse "yesterday"`},
		{"g.inject(UUID())", 1, 10, "a random UUID, UUID(), is not supported"},
		{"g.inject(UUID('not-a-uuid'))", 1, 10, `cannot parse "not-a-uuid" as a UUID`},
		{"g.inject('a'..'c')", 1, 10, "string ranges are not supported"},
		{"g.inject(1..)", 1, 13, "expected an integer after '..'"},
		{"g.inject(1L..3)", 1, 10, "a range takes two int literals"},
		{"g.inject([1, 2,])", 1, 16, "expected a value, found ']'"},
		{"g.inject([a: 1, 2])", 1, 18, "expected ':' after a map key"},
		{"g.inject([1, a: 2])", 1, 14, "unknown identifier a"},
		{"g.inject({1,})", 1, 13, "expected a value, found '}'"},
		{"g.inject({,1})", 1, 11, "expected a value, found ','"},
		{"g.inject((1))", 1, 10, "a parenthesized value is only allowed as a map key"},
		{"g.inject(new Date())", 1, 10, "new is only allowed for strategies"},
		{"g.withStrategies(new)", 1, 21, "expected a strategy class name, found ')'"},
		{"g.withStrategies(new ReadOnlyStrategy).V()", 1, 38, "expected '(' after new ReadOnlyStrategy"},
		{"g.withStrategies(SubgraphStrategy(vertices __.out())).V()", 1, 44, "expected ':' after the configuration key vertices"},
		{"g.withoutStrategies(new ReadOnlyStrategy()).V()", 1, 21, "takes strategy class names, not new instances"},
		{"g.withStrategies(PartitionStrategy.builder()).V()", 1, 36, "expected build() after PartitionStrategy."},
		{"g.withStrategies(PartitionStrategy.build().partitionKey()).V()", 1, 44, "the builder method partitionKey() needs a value"},
		{"g.V().has('a', 'b'", 1, 19, "expected ')' or ','"},
		{"g.V() /* unterminated", 1, 7, "unterminated /* comment"},
		{"g.V('\xff')", 1, 6, "not valid UTF-8"},
		{"g.V(#)", 1, 5, "unexpected character '#'"},
		{"g.V().has('a', gt(1)).", 1, 23, "expected a step name after '.'"},
		{"g.V().T.id", 1, 8, "expected '(' after T"},
		// Columns count characters, not bytes; CRLF ends a line.
		{"g.V('日本', x)", 1, 11, "unknown identifier x"},
		{"g.V()\r\n  .out(y)", 2, 8, "unknown identifier y"},
	}
	long := strings.Repeat("x", 5000)
	cases = append(cases, []struct {
		script    string
		line, col int
		msg       string
	}{
		{"g.V(" + long + ")", 1, 5, "unknown identifier xxxxxxxx"},
		{"g.V(1" + long + ")", 1, 5, "malformed number 1xxxxxxx"},
	}...)
	for _, c := range cases {
		_, err := Parse(c.script, nil, Limits{})
		se, ok := err.(*SyntaxError)
		if !ok {
			t.Errorf("%q: got %v (%T), want a *SyntaxError", c.script, err, err)
			continue
		}
		if se.Line != c.line || se.Column != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q:\n got %d:%d %s\nwant %d:%d ...%s...", c.script, se.Line, se.Column, se.Msg, c.line, c.col, c.msg)
		}
		if n := len([]rune(se.Msg)); n > maxMsgLen+3 {
			t.Errorf("%.40q: a message of %d characters", c.script, n)
		}
		if !strings.HasPrefix(se.Error(), "gremlin syntax error at line ") {
			t.Errorf("%q: Error() = %q", c.script, se.Error())
		}
	}
}

func TestStringMethods(t *testing.T) {
	tr, err := Parse("g.withStrategies(new S(a: 1)).V().has('x', gt(1)).order().by(desc)", nil, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		got  string
		want string
	}{
		{tr.String(), "g.withStrategies(new S(a:1)).V().has('x',P.gt(1)).order().by(Order.desc)"},
		{tr.Steps[1].String(), "has('x',P.gt(1))"},
		{tr.Steps[1].Args[1].(P).String(), "P.gt(1)"},
		{tr.Steps[3].Args[0].(Token).String(), "Order.desc"},
		{tr.Source[0].Args[0].(Strategy).String(), "new S(a:1)"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
}
