package lang_test

import (
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

func ExampleParse() {
	t, err := lang.Parse(`g.V(pk).has("age", gt(30)).order().by('name', decr).values('name')`,
		map[string]any{"pk": []any{"USA", "Seattle"}}, lang.Limits{})
	if err != nil {
		panic(err)
	}
	fmt.Println(lang.Format(t))
	fmt.Println(len(t.Steps), "steps,", lang.CountOperators(t), "operators")

	_, err = lang.Parse("g.V().filter{it.get().value('age') > 30}", nil, lang.Limits{})
	var se *lang.SyntaxError
	fmt.Println(errors.As(err, &se), se.Line, se.Column, se.Msg)

	_, err = lang.Parse("g.V().out().out()", nil, lang.Limits{Operators: 2})
	var le *lang.LimitError
	fmt.Println(errors.As(err, &le), le.Name)
	// Output:
	// g.V(['USA','Seattle']).has('age',P.gt(30)).order().by('name',Order.desc).values('name')
	// 5 steps, 4 operators
	// true 1 13 lambdas and closures are not supported (after filter)
	// true operator depth
}
