package mongo

import (
	"sort"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/eval"
	"github.com/parsecdb/parsec/internal/query/parser"
)

// nosqlQuery runs a Cosmos SQL query on a container and returns its rows.
func nosqlQuery(t testing.TB, c *engine.Container, text string) []string {
	t.Helper()
	q, err := parser.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := engine.CompileQuery(q, map[string]eval.Value{})
	if err != nil {
		t.Fatal(err)
	}
	page, err := c.Query(plan, engine.QueryScope{}, nil, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range page.Rows {
		rows = append(rows, string(r))
	}
	sort.Strings(rows)
	return rows
}

// TestQueryableThroughNoSQL: documents written by MongoDB clients answer
// Cosmos SQL queries on their plain fields and on Extended JSON members.
func TestQueryableThroughNoSQL(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := ctxT(t)
	c := env.client.Database("q").Collection("c")
	oid, _ := bson.ObjectIDFromHex("5f1a2b3c4d5e6f7a8b9c0d1e")
	if _, err := c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: oid}, {Key: "n", Value: int32(5)}, {Key: "tag", Value: "a"}},
		bson.D{{Key: "_id", Value: "two"}, {Key: "n", Value: 7.5}, {Key: "tag", Value: "b"}, {Key: "big", Value: int64(9)}},
	}); err != nil {
		t.Fatal(err)
	}
	ec := mustContainer(t, env, "q", "c")
	if got := nosqlQuery(t, ec, `SELECT VALUE c.id FROM c WHERE c.n > 6`); strings.Join(got, ",") != `"two"` {
		t.Fatalf("n > 6: %v", got)
	}
	if got := nosqlQuery(t, ec, `SELECT VALUE c.tag FROM c WHERE c._id["$oid"] = "5f1a2b3c4d5e6f7a8b9c0d1e"`); strings.Join(got, ",") != `"a"` {
		t.Fatalf("by $oid: %v", got)
	}
	if got := nosqlQuery(t, ec, `SELECT VALUE c.big["$numberLong"] FROM c WHERE IS_DEFINED(c.big)`); strings.Join(got, ",") != `"9"` {
		t.Fatalf("int64: %v", got)
	}
}
