package mql

import (
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestParsedValuesAreShareable uses one parsed filter, projection, sort, update and pipeline from
// several goroutines at once (run with -race to check the claim that they are safe to share) and
// checks every goroutine gets the same answers.
func TestParsedValuesAreShareable(t *testing.T) {
	f, err := ParseFilter(doc("a", doc("$in", arr(int32(1), int32(2), int32(3), int32(4), int32(5), int32(6), int32(7), int32(8), int32(9))),
		"s", bson.Regex{Pattern: "^x"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProjection(doc("a", int32(1), "n", doc("$add", arr("$a", int32(1)))))
	if err != nil {
		t.Fatal(err)
	}
	u, err := ParseUpdate(doc("$inc", doc("a", int32(1)), "$addToSet", doc("t", doc("$each", arr("p", "q")))), nil)
	if err != nil {
		t.Fatal(err)
	}
	pl, err := ParsePipeline([]bson.D{doc("$match", doc("s", bson.Regex{Pattern: "^x"})), doc("$group", doc("_id", "$s", "n", doc("$sum", "$a"))), doc("$sort", doc("_id", int32(1)))}, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := []bson.D{doc("_id", int32(1), "a", int32(3), "s", "xy"), doc("_id", int32(2), "a", int32(10), "s", "xy"), doc("_id", int32(3), "a", int32(4), "s", "z")}
	var wg sync.WaitGroup
	results := make([]string, 8)
	for g := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := ""
			for i := 0; i < 50; i++ {
				for _, d := range docs {
					out += formatValue(f.Match(d)) + formatValue(p.Apply(d))
					nd, _, err := u.Apply(d, false, testNow)
					if err != nil {
						out += err.Error()
					}
					out += formatValue(nd)
				}
				res, err := pl.Run(docs)
				if err != nil {
					out += err.Error()
				}
				for _, r := range res {
					out += formatValue(r)
				}
			}
			results[g] = out
		}()
	}
	wg.Wait()
	for _, r := range results[1:] {
		if r != results[0] {
			t.Fatal("goroutines disagree")
		}
	}
	if !f.Match(docs[0]) || f.Match(docs[1]) || f.Match(docs[2]) {
		t.Error("filter answers")
	}
}
