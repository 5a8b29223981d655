package exec

import (
	"testing"
)

// BenchmarkExecLimits runs a filtering scan and a projecting scan over
// 1,000 documents without limits and within the engine's kind of limits:
// the cost of the budget counters, checks and page-size estimates.
func BenchmarkExecLimits(b *testing.B) {
	docs := synthetic(7, 1000)
	lim := &Limits{MaxBytes: 32 << 20, MaxPageBytes: 4 << 20, Held: NewHeld(64<<20, nil), Check: func() error { return nil }}
	for _, text := range []string{`SELECT * FROM c WHERE c.n = 5`, `SELECT c.id, c.n, t FROM c JOIN t IN c.t`} {
		p, err := compile(text, "")
		if err != nil {
			b.Fatal(err)
		}
		for _, run := range []struct {
			name string
			lim  *Limits
		}{{"none", nil}, {"limits", lim}} {
			b.Run(text+"/"+run.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := ExecLimits(p, sources([][]doc{docs}, true), nil, 0, run.lim); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
