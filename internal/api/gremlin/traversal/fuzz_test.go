package traversal_test

import (
	"context"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
	"github.com/parsecdb/parsec/internal/api/gremlin/traversal"
)

// FuzzRun checks that no script, however odd, makes the evaluator panic
// or run past its limits: every outcome is results or an *Error.
func FuzzRun(f *testing.F) {
	for _, c := range modernCases {
		f.Add(c.script)
	}
	for _, s := range []string{
		"g.V().repeat(both()).times(3).path().by('name').by(label)",
		"g.V().as('a').out().as('b').select('a','b').by(valueMap()).unfold().select(values)",
		"g.addV('x').property('name','z').addE('e').to(V('1')).property('w', 1).inV().drop()",
		"g.V().group().by(label).by(union(count(), values('age').sum()).fold()).unfold()",
		"g.V().local(bothE().order().by('weight').limit(1)).otherV().dedup().tree()",
	} {
		f.Add(s)
	}
	g := modern(f)
	f.Fuzz(func(t *testing.T, script string) {
		tr, err := lang.Parse(script, nil, lang.Limits{})
		if err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		// Writes go to a copy so that the fuzzer's graph stays the same.
		s := copyGraph(t, g)
		_, err = traversal.Run(ctx, tr, s, traversal.Options{Timeout: 500 * time.Millisecond, MemoryBudget: 4 << 20, MaxResults: 10000})
		if err != nil {
			var e *traversal.Error
			if !asError(err, &e) {
				t.Fatalf("%s: an error that is not an *Error: %v", script, err)
			}
		}
	})
}
