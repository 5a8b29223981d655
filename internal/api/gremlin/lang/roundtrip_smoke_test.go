package lang

import "testing"

func TestParseFormatRoundTripExamples(t *testing.T) {
	for _, s := range []string{
		"g.V().has('name','marko')",
		`g.V(['USA','Seattle']).out("knows").values('name');`,
		"g.V('thomas').outE('knows').where(inV().has('id', 'mary'))",
		"g.V().hasLabel('person').order().by('firstName', decr)",
		"g.V().has('age', P.gt(3).and(lt(10))).repeat(out()).times(2).emit()",
		"g.withSideEffect('a',[]).withStrategies(ReadOnlyStrategy, new SubgraphStrategy(vertices: __.hasLabel('person'))).V().toList()",
		"g.inject(1, 2L, 3.5, 1.5f, 10n, 1.0m, 0x1F, -Infinity, NaN, null, true, [a: 1, (T.id): 2, 'x': [:]], {1, 1, 2}, 1..3, UUID('123e4567-e89b-12d3-a456-426614174000'), datetime('2020-01-01'))",
		"g.V().project('a','b').by(__.out().count()).by(values('x').fold()).next(2)",
		"g.V().where(not(within('a'))).where(not(out()))",
		"g.V(x).has('y', within(['a','b']))",
	} {
		tr, err := Parse(s, map[string]any{"x": "1"}, Limits{})
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		f := Format(tr)
		t.Logf("%s\n  -> %s  ops=%d", s, f, CountOperators(tr))
		tr2, err := Parse(f, nil, Limits{})
		if err != nil || !Equal(tr, tr2) {
			t.Errorf("round trip %s: %v", f, err)
		}
	}
}
