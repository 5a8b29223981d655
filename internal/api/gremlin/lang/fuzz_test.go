package lang

import (
	"errors"
	"strings"
	"testing"
)

// fuzzSeeds is FuzzParse's seed corpus: every construct of the grammar and
// every refusal, so that mutations start from both sides of each rule. The
// TinkerPop documentation examples and feature-test traversals (testdata)
// are added too.
var fuzzSeeds = []string{
	"g.V()",
	"g.V(['USA','Seattle']).out('knows').values('name');",
	"g.V('thomas').outE('knows').where(inV().has('id', 'mary'))",
	"g.addV('person').property('id', 'thomas').property('firstName', 'Thomas').property('pk','pk')",
	"g.V(['surfboards', '1']).addE('replaces').to(g.V(['surfboards', '2']))",
	"g.V().hasLabel('person').order().by('firstName', decr).by(T.id, Order.incr)",
	"g.V().repeat(out()).times(2).emit().until(__.has('x')).path().by('name')",
	"g.V().choose(values('age')).option(27, __.in()).option(none, identity())",
	"g.V().project('a','b').by(__.out().count()).by(values('x').fold()).next(2)",
	"g.V().group().by(label).by(count()).unfold().order().by(values, desc)",
	"g.V().values('age').math('_ + 1')",
	"g.V().has('age', P.gt(3).and(lt(10)).or(eq(20)).negate())",
	"g.V().where(not(within('a'))).where(not(out())).has('n', TextP.startingWith('x'))",
	"g.V().has('a', within(['a','b'])).has('b', without()).has('c', between(1, 2))",
	"g.V().has('s', typeOf(GType.STRING)).asNumber(GType.INT).dateAdd(DT.day, 1)",
	"g.withSideEffect('a',[]).withStrategies(ReadOnlyStrategy, new SubgraphStrategy(vertices: __.hasLabel('person'))).V().toList()",
	"g.withStrategies(PartitionStrategy.build().partitionKey('pk').readPartitions('a', 'b').create()).V()",
	"g.withoutStrategies(ReadOnlyStrategy).withSack(1.0f, sum).withBulk(false).withPath().V().iterate()",
	"g.inject(1, 2L, 3.5, 1.5f, 2.0d, 10n, 1.0m, 0x1F, 010, 1_000, 1b, 2s, 3i, -Infinity, NaN, null, true)",
	"g.inject([a: 1, (T.id): 2, 'x': [:], 3: [], (OUT): {}], {1, 1, 2}, 1..3, 3..1)",
	"g.inject(UUID('123e4567-e89b-12d3-a456-426614174000'), datetime('2020-01-01T10:00:00.5+02:00'), datetime('2020-01-01'))",
	"g.inject('it\\'s', \"say \\\"hi\\\"\", '\\u00e9\\uD83D\\uDE00\\0\\377\\n', '$x')",
	"g.mergeV([(T.label): 'Dog', name: 'Max']).option(Merge.onCreate, [alias: 'M']).option(onMatch, [:])",
	"g.V().property(list, 'x', 1).property(Cardinality.single, 'y', 2).select(Pop.first, 'a').select(all, 'b')",
	"g.V().count(local).sack(Operator.sum).select(Column.keys).to(Direction.OUT).from(IN).barrier(normSack)",
	"g.V().valueMap(true).with(WithOptions.tokens, WithOptions.labels).io(IO.reader)",
	"g.V(g.V().has('name','marko').id().next()).coalesce(__, out())",
	"g.V().next()",
	"g.V().hasNext()",
	"g.V(x).has('y', within(xs)).limit(n)",
	"g.V().\n  has(\"name\", \"marko\") // comment\n  /* block */ .out()",
	// Refused forms.
	"",
	"g",
	"g.V(",
	"g.V().filter{it.get().value('age') > 30}",
	"g.V().fold(0) {a,b -> a + b}",
	"x = g.V()",
	"g.V(); g.E()",
	"g.tx().commit()",
	"g.V().next().out()",
	"g.V().has('a', 1 == 1)",
	"g.V().property('a', single('x'))",
	"g.inject(datetime())",
	"g.inject('a'..'c')",
	"g.inject(1..100000)",
	"g.V(unknown)",
	"g.V('\\q')",
	"g.V(08)",
	"g.V(" + strings.Repeat("[", 120),
	"g.V()" + strings.Repeat(".out()", 401),
}

var fuzzBindings = map[string]any{"x": "1", "xs": []any{"a", 2}, "n": 3, "m": map[string]any{"k": []any{1.5}}}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	for _, ex := range readDocExamples(f) {
		f.Add(ex.script)
	}
	for _, ex := range readExamples(f, "testdata/tinkerpop-features.txt") {
		f.Add(ex.script)
	}
	lim := Limits{ScriptBytes: 8 << 10, Operators: 60, Nesting: 24}
	big := Limits{ScriptBytes: 1 << 30, Operators: 1 << 30, Nesting: 1 << 20}
	f.Fuzz(func(t *testing.T, script string) {
		tr, err := Parse(script, fuzzBindings, lim)
		if err != nil {
			var se *SyntaxError
			var le *LimitError
			var be *BindingError
			switch {
			case errors.As(err, &se):
				lines := strings.Count(script, "\n") + 1
				if se.Line < 1 || se.Line > lines || se.Column < 1 || se.Msg == "" {
					t.Fatalf("syntax error at %d:%d (script has %d lines): %q", se.Line, se.Column, lines, se.Msg)
				}
			case errors.As(err, &le):
				if le.Value <= le.Max {
					t.Fatalf("limit error within the limit: %+v", le)
				}
			case errors.As(err, &be):
			default:
				t.Fatalf("error of type %T: %v", err, err)
			}
			if len(script) > lim.ScriptBytes && !errors.As(err, &le) {
				t.Fatalf("a script over the length limit gave %v", err)
			}
			return
		}
		if len(script) > lim.ScriptBytes {
			t.Fatalf("a script of %d bytes passed a limit of %d", len(script), lim.ScriptBytes)
		}
		if n := CountOperators(tr); n > lim.Operators {
			t.Fatalf("%d operators passed a limit of %d", n, lim.Operators)
		}
		if d := traversalDepth(tr); d > lim.Nesting {
			t.Fatalf("a tree %d deep passed a nesting limit of %d", d, lim.Nesting)
		}
		if tr.Anonymous {
			t.Fatalf("a script gave an anonymous traversal")
		}
		text := Format(tr)
		back, err := Parse(text, nil, big)
		if err != nil {
			t.Fatalf("%q formats as %q, which does not parse: %v", script, text, err)
		}
		if !Equal(tr, back) {
			t.Fatalf("%q formats as %q, which reads back as %q", script, text, Format(back))
		}
		if again := Format(back); again != text {
			t.Fatalf("Format is not stable: %q then %q", text, again)
		}
	})
}
