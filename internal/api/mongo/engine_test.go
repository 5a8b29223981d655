package mongo

import (
	"testing"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

func mustContainer(t testing.TB, env *testEnv, db, coll string) *engine.Container {
	t.Helper()
	c, err := env.eng.Container(db, coll)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mqlCompare(a, b any) int { return mql.Compare(a, b) }
