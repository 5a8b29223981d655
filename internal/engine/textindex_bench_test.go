package engine

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// TestTextIndexBenchmark measures writes and full-text queries on two
// containers that differ only in their full-text index (both have the
// full-text policy): PARSEC_TEXT_BENCH=<items> runs it (BENCHMARKS.md).
func TestTextIndexBenchmark(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("PARSEC_TEXT_BENCH"))
	if n <= 0 {
		t.Skip("set PARSEC_TEXT_BENCH=<items> to run")
	}
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	ftp := json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text","language":"en-US"}]}`)
	for _, s := range []ContainerSpec{
		{ID: "indexed", PartitionKey: hashDef("/pk"), IndexingPolicy: json.RawMessage(`{"fullTextIndexes":[{"path":"/text"}],"excludedPaths":[{"path":"/text/?"}]}`), Extra: map[string]json.RawMessage{"fullTextPolicy": ftp}},
		{ID: "scanned", PartitionKey: hashDef("/pk"), IndexingPolicy: json.RawMessage(`{"excludedPaths":[{"path":"/text/?"}]}`), Extra: map[string]json.RawMessage{"fullTextPolicy": ftp}},
	} {
		if _, err := e.CreateContainer("db", s, Throughput{RUs: 40000}); err != nil {
			t.Fatal(err)
		}
	}
	// Zipf-distributed words over a vocabulary of 5,000, 30 words a text.
	r := rand.New(rand.NewSource(1))
	z := rand.NewZipf(r, 1.1, 1, 4999)
	texts := make([]string, n)
	for i := range texts {
		ws := make([]string, 30)
		for j := range ws {
			ws[j] = fmt.Sprintf("w%dx", z.Uint64())
		}
		texts[i] = strings.Join(ws, " ")
	}
	for _, id := range []string{"indexed", "scanned"} {
		c, _ := e.Container("db", id)
		start := time.Now()
		for i, text := range texts {
			body, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "pk": fmt.Sprint("p", i%500), "text": text})
			op, err := c.PrepareWrite(OpCreate, body, key(fmt.Sprint("p", i%500)), true)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.Execute(&Command{Ops: []Op{op}}, ""); err != nil {
				t.Fatal(err)
			}
		}
		el := time.Since(start)
		t.Logf("%s: %d creates in %v: %.0f creates/s (one at a time), %d partitions", id, n, el.Round(time.Millisecond), float64(n)/el.Seconds(), len(c.Partitions()))
	}
	queries := map[string]string{
		"FullTextScore TOP 10": `SELECT TOP 10 VALUE c.id FROM c ORDER BY RANK FullTextScore(c.text, "w40x", "w700x")`,
		"FullTextContains":     `SELECT VALUE c.id FROM c WHERE FullTextContains(c.text, "w900x")`,
	}
	for _, name := range []string{"FullTextScore TOP 10", "FullTextContains"} {
		for _, id := range []string{"indexed", "scanned"} {
			c, _ := e.Container("db", id)
			q, err := parser.Parse(queries[name])
			if err != nil {
				t.Fatal(err)
			}
			var lat []time.Duration
			var ru float64
			rounds := 10
			for range rounds {
				start := time.Now()
				plan, err := c.CompileQuery(q, map[string]eval.Value{})
				if err != nil {
					t.Fatal(err)
				}
				page, err := c.Query(plan, QueryScope{}, nil, 1000)
				if err != nil {
					t.Fatal(err)
				}
				ru += page.Charge
				for page.Next != nil {
					plan, _ = c.CompileQuery(q, map[string]eval.Value{})
					if page, err = c.Query(plan, QueryScope{}, page.Next, 1000); err != nil {
						t.Fatal(err)
					}
					ru += page.Charge
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			t.Logf("%s, %s: p50 %v, p99 %v, %.1f RU a query", name, id, lat[len(lat)/2].Round(10*time.Microsecond), lat[len(lat)*99/100].Round(10*time.Microsecond), ru/float64(rounds))
		}
	}
}
