package eval

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/parser"
)

func mustExpr(t *testing.T, src string) ast.Expr {
	t.Helper()
	e, err := parser.ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestMissingHooks: what Eval leaves to the executor or the environment
// fails cleanly, with the right sentinel, when the Env lacks the hook.
func TestMissingHooks(t *testing.T) {
	env := &Env{}
	for _, c := range []struct {
		src  string
		kind error
	}{
		{"(SELECT VALUE 1)", ErrNeedsExecutor},
		{"EXISTS(SELECT VALUE 1)", ErrNeedsExecutor},
		{"udf.f(1)", ErrNeedsExecutor},
		{"RAND()", ErrMissingEnv},
		{"GetCurrentDateTime()", ErrMissingEnv},
		{"GetCurrentTicksStatic()", ErrMissingEnv},
		{"SUM(1)", ErrAggregatePlacement},
		{"c", ErrUnbound},
		{"@p", ErrUndeclaredParam},
		{"Nope()", ErrUnknownFunction},
		{"ST_DISTANCE(1, 2)", ErrUnsupported},
		{"ABS(1, 2)", ErrArgCount},
	} {
		_, err := Eval(mustExpr(t, c.src), env)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.kind) {
			t.Errorf("%s: got %v, want an *Error wrapping %v", c.src, err, c.kind)
			continue
		}
		query := c.kind != ErrNeedsExecutor && c.kind != ErrMissingEnv
		if errors.Is(err, ErrInvalidQuery) != query {
			t.Errorf("%s: wraps ErrInvalidQuery = %v, want %v", c.src, !query, query)
		}
	}
}

func TestHooks(t *testing.T) {
	var udfCalls int
	env := &Env{
		Vars: map[string]Value{"c": ObjectValue([]Member{{"n", IntValue(2)}})},
		UDF: func(name string, args []Value) (Value, error) {
			udfCalls++
			if name != "twice" {
				return Value{}, errors.New("no such udf")
			}
			return NumberValue(2 * args[0].AsFloat()), nil
		},
		Aggregate: func(call *ast.Call, env *Env) (Value, error) {
			return IntValue(42), nil
		},
		Now: func() time.Time { return time.Date(2001, 2, 3, 4, 5, 6, 789, time.UTC) },
	}
	for _, c := range []struct{ src, want string }{
		{"udf.twice(c.n)", "4"},
		{"udf.twice(c.missing)", "undefined"},
		{"COUNT(1) + 1", "43"},
		{"GetCurrentDateTimeStatic()", `"2001-02-03T04:05:06.0000007Z"`},
		{"GetCurrentTimestamp()", "981173106000"},
	} {
		v, err := Eval(mustExpr(t, c.src), env)
		if err != nil || v.String() != c.want {
			t.Errorf("%s = %s, %v; want %s", c.src, v, err, c.want)
		}
	}
	if udfCalls != 1 {
		t.Errorf("udf called %d times, want 1 (not for an undefined argument)", udfCalls)
	}
	if _, err := Eval(mustExpr(t, "udf.other(1)"), env); err == nil || err.Error() != "no such udf" {
		t.Errorf("UDF error not passed through: %v", err)
	}
}

func TestScopes(t *testing.T) {
	outer := &Env{Vars: map[string]Value{"c": IntValue(1), "x": IntValue(2)}, Params: map[string]Value{"p": IntValue(3)}}
	inner := outer.Child(map[string]Value{"x": IntValue(10)})
	v, err := Eval(mustExpr(t, "[c, x, @p]"), inner)
	if err != nil || v.String() != "[1,10,3]" {
		t.Errorf("inner scope: %s, %v", v, err)
	}
	if v, _ := Eval(mustExpr(t, "x"), outer); v.String() != "2" {
		t.Errorf("outer scope changed: %s", v)
	}
	// A binding named NaN hides the constant.
	nan := &Env{Vars: map[string]Value{"NaN": StringValue("bound")}}
	if v, _ := Eval(mustExpr(t, "NaN"), nan); v.String() != `"bound"` {
		t.Errorf("NaN binding: %s", v)
	}
}

func TestSubqueryKinds(t *testing.T) {
	rows := []Value{IntValue(1), BoolValue(true), StringValue("x")}
	env := &Env{Subquery: func(q *ast.Query, env *Env) ([]Value, error) { return rows, nil }}
	for _, c := range []struct{ src, want string }{
		{"(SELECT VALUE 0)", "1"},
		{"FIRST(SELECT VALUE 0)", "1"},
		{"LAST(SELECT VALUE 0)", `"x"`},
		{"ARRAY(SELECT VALUE 0)", `[1,true,"x"]`},
		{"EXISTS(SELECT VALUE 0)", "true"},
		{"ALL(SELECT VALUE 0)", "false"},
	} {
		v, err := Eval(mustExpr(t, c.src), env)
		if err != nil || v.String() != c.want {
			t.Errorf("%s = %s, %v; want %s", c.src, v, err, c.want)
		}
	}
	boom := errors.New("boom")
	env.Subquery = func(*ast.Query, *Env) ([]Value, error) { return nil, boom }
	if _, err := Eval(mustExpr(t, "EXISTS(SELECT VALUE 0)"), env); !errors.Is(err, boom) {
		t.Errorf("subquery error not passed through: %v", err)
	}
}

func TestCheckWithoutParams(t *testing.T) {
	q, err := parser.Parse("SELECT * FROM c WHERE c.a = @anything")
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(q); err != nil {
		t.Errorf("Check looked at parameters: %v", err)
	}
	if err := CheckParams(q, nil); !errors.Is(err, ErrUndeclaredParam) {
		t.Errorf("CheckParams(nil) = %v", err)
	}
}

func TestFunctionNames(t *testing.T) {
	names := FunctionNames()
	if len(names) < 90 {
		t.Errorf("only %d functions", len(names))
	}
	for _, want := range []string{"ABS", "DateTimeBin", "RegexMatch", "SetUnion", "IS_INTEGER", "DOCUMENTID"} {
		found := false
		for _, n := range names {
			found = found || n == want
		}
		if !found {
			t.Errorf("%s missing from FunctionNames", want)
		}
	}
	// Lookup is case-insensitive and does not confuse long names.
	if lookupBuiltin("tostring") == nil || lookupBuiltin("ToStRiNg") == nil || lookupBuiltin(strings.Repeat("a", 100)) != nil {
		t.Errorf("lookupBuiltin")
	}
}

func TestDocumentID(t *testing.T) {
	for _, c := range []struct {
		rid  string
		want uint64
		ok   bool
	}{
		{"36ZyAPW+uN8NAAAAAAAAAA==", 13, true}, // documentid.md
		{"36ZyAPW+uN8BAAAAAAAAAA==", 1, true},
		{rid(1, 0x80), 0, false}, // a stored procedure
		{rid(1<<59, 0x00), 1 << 59, true},
		{"36ZyAA==", 0, false}, // a collection
		{"not base64!", 0, false},
	} {
		got, ok := DocumentID(c.rid)
		if got != c.want || ok != c.ok {
			t.Errorf("DocumentID(%s) = %d, %v; want %d, %v", c.rid, got, ok, c.want, c.ok)
		}
	}
}

// rid builds a document-like _rid with document number n whose top byte is
// or-ed with typ.
func rid(n uint64, typ byte) string {
	b := []byte{0xdf, 0xa6, 0x72, 0x00, 0xf5, 0xbe, 0xb8, 0xdf, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint64(b[8:], n)
	b[15] |= typ
	return strings.ReplaceAll(base64.StdEncoding.EncodeToString(b), "/", "-")
}

func TestLikeCache(t *testing.T) {
	env := &Env{Cache: NewCache()}
	for range 2 * cacheSize {
		// Distinct patterns overflow the cache, which then starts over.
		v, err := Eval(mustExpr(t, `"abc" LIKE "a%" AND RegexMatch("abc", "b")`), env)
		if err != nil || !v.AsBool() {
			t.Fatalf("%s, %v", v, err)
		}
	}
}
