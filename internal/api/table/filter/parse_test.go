package filter

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/api/table/edm"
)

func cmp(prop string, op Op, v edm.Value) *Compare { return &Compare{Prop: prop, Op: op, Value: v} }

func str(s string) edm.Value  { return edm.StringValue(s) }
func i32(i int32) edm.Value   { return edm.Int32Value(i) }
func i64(i int64) edm.Value   { return edm.Int64Value(i) }
func dbl(f float64) edm.Value { return edm.DoubleValue(f) }

func TestParseGood(t *testing.T) {
	dt := edm.DateTimeValue(time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC))
	cases := []struct {
		in   string
		want Expr
	}{
		{"PartitionKey eq 'a'", cmp("PartitionKey", Eq, str("a"))},
		{"  Name   ne  'it''s'  ", cmp("Name", Ne, str("it's"))},
		{"Name eq ''", cmp("Name", Eq, str(""))},
		{"Name eq ''''", cmp("Name", Eq, str("'"))},
		{"Age gt 5", cmp("Age", Gt, i32(5))},
		{"Age ge -2147483648", cmp("Age", Ge, i32(-2147483648))},
		{"Age lt 5L", cmp("Age", Lt, i64(5))},
		{"Age le 9223372036854775807L", cmp("Age", Le, i64(9223372036854775807))},
		// An unsuffixed integer beyond Int32 is an Int64. Python's
		// azure-data-tables sends integers of up to 32 bits (so up to
		// 4294967295) without the L (_parameter_filter_substitution), and
		// Azurite 3.35.0 accepts them.
		{"Age eq 2147483648", cmp("Age", Eq, i64(2147483648))},
		{"Age eq -2147483649", cmp("Age", Eq, i64(-2147483649))},
		{"Age eq 4294967295", cmp("Age", Eq, i64(4294967295))},
		{"Age eq -5l", cmp("Age", Eq, i64(-5))},
		{"D eq 1.5", cmp("D", Eq, dbl(1.5))},
		{"D eq 2.0", cmp("D", Eq, dbl(2))},
		{"D eq 1e10", cmp("D", Eq, dbl(1e10))},
		{"D eq 1.5E-3", cmp("D", Eq, dbl(1.5e-3))},
		{"D eq 2D", cmp("D", Eq, dbl(2))},
		{"D eq -2.5d", cmp("D", Eq, dbl(-2.5))},
		{"B eq true", cmp("B", Eq, edm.BooleanValue(true))},
		// OData v3's special Double literals (nanInfinity), which the legacy
		// .NET SDK's GenerateFilterConditionForDouble can emit.
		{"D lt INF", cmp("D", Lt, dbl(math.Inf(1)))},
		{"D gt -INF", cmp("D", Gt, dbl(math.Inf(-1)))},
		{"D ne INFD", cmp("D", Ne, dbl(math.Inf(1)))},
		{"-INFd lt D", cmp("D", Gt, dbl(math.Inf(-1)))},
		{"T ge datetime'2008-07-10T00:00:00Z'", cmp("T", Ge, dt)},
		{"T ge datetime'2008-07-10T02:00:00+02:00'", cmp("T", Ge, dt)},
		{"G eq guid'6BC44494-d2b7-4738-8f87-acd692226a5c'", cmp("G", Eq, edm.GuidValue("6bc44494-d2b7-4738-8f87-acd692226a5c"))},
		{"X eq X'0aFF'", cmp("X", Eq, edm.BinaryValue([]byte{0x0a, 0xff}))},
		{"X eq binary'00'", cmp("X", Eq, edm.BinaryValue([]byte{0}))},
		{"X eq X''", cmp("X", Eq, edm.BinaryValue([]byte{}))},
		// A literal on the left moves to the right with the operator flipped.
		{"'x' eq Name", cmp("Name", Eq, str("x"))},
		{"5 lt Age", cmp("Age", Gt, i32(5))},
		{"5 ge Age", cmp("Age", Le, i32(5))},
		{"a eq 1 and b eq 2 and c eq 3", &And{&And{cmp("a", Eq, i32(1)), cmp("b", Eq, i32(2))}, cmp("c", Eq, i32(3))}},
		{"a eq 1 or b eq 2 and c eq 3", &Or{cmp("a", Eq, i32(1)), &And{cmp("b", Eq, i32(2)), cmp("c", Eq, i32(3))}}},
		{"(a eq 1 or b eq 2) and c eq 3", &And{&Or{cmp("a", Eq, i32(1)), cmp("b", Eq, i32(2))}, cmp("c", Eq, i32(3))}},
		{"not a eq 1 and b eq 2", &And{&Not{cmp("a", Eq, i32(1))}, cmp("b", Eq, i32(2))}},
		{"not (a eq 1 and b eq 2)", &Not{&And{cmp("a", Eq, i32(1)), cmp("b", Eq, i32(2))}}},
		{"not not a eq 1", &Not{&Not{cmp("a", Eq, i32(1))}}},
		{"Active", &Prop{"Active"}},
		{"not Active", &Not{&Prop{"Active"}}},
		{"Active and true", &And{&Prop{"Active"}, &Const{true}}},
		// The service accepts $filter=true and $filter=false (Azure/Azurite#1573,
		// whose fix special-cases exactly these; Azurite 3.35.0 returns all
		// entities for "true").
		{"true", &Const{true}},
		{"false", &Const{false}},
		{"not (true)", &Not{&Const{true}}},
		// Literal prefixes ignore case (Azurite: x'01' matched on 3.35.0).
		{"X eq x'00'", cmp("X", Eq, edm.BinaryValue([]byte{0}))},
		{"T ge DateTime'2008-07-10T00:00:00Z'", cmp("T", Ge, dt)},
		{"G eq GUID'6bc44494-d2b7-4738-8f87-acd692226a5c'", cmp("G", Eq, edm.GuidValue("6bc44494-d2b7-4738-8f87-acd692226a5c"))},
		{"((((PartitionKey eq 'a'))))", cmp("PartitionKey", Eq, str("a"))},
		{"_x1 eq 1", cmp("_x1", Eq, i32(1))},
		{"Größe eq 1", cmp("Größe", Eq, i32(1))},
		// Words that only look like keywords are property names.
		{"AND eq 1", cmp("AND", Eq, i32(1))},
		{"datetime eq 1", cmp("datetime", Eq, i32(1))},
		{"a eq 1\tand\nb eq 2", &And{cmp("a", Eq, i32(1)), cmp("b", Eq, i32(2))}},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseBad(t *testing.T) {
	cases := []struct {
		in     string
		offset int
		msg    string // a fragment of the message
	}{
		{"", 0, "empty"},
		{"   ", 0, "empty"},
		{"Name eq", 7, "expected a property name or a literal"},
		{"Name 'a'", 5, "expected 'and', 'or'"},
		{"Name eq 'a", 8, "unterminated"},
		{"Name eq \"a\"", 8, "single quotes"},
		{"Name EQ 'a'", 5, "expected 'and', 'or'"},
		{"Name eq 'a' AND Age eq 1", 12, "expected 'and', 'or'"},
		{"(Name eq 'a'", 12, "expected ')'"},
		{"Name eq 'a')", 11, "expected 'and', 'or'"},
		{"1 eq 1", 0, "property on one side"},
		{"A eq B", 0, "one side of a comparison must be a literal"},
		// The real service answers "1" with "The $filter expression must
		// evaluate to a single boolean value" (Azure/Azurite#1185).
		{"5", 0, "single boolean value"},
		{"'a'", 0, "single boolean value"},
		{"  42L ", 2, "single boolean value"},
		{"(5)", 2, "comparison operator"},
		{"a eq 1 and 5", 12, "comparison operator"},
		{"Age eq 9223372036854775808", 7, "Edm.Int64 range"},
		{"Age eq 9223372036854775808L", 7, "Edm.Int64 range"},
		{"Age eq 1.5L", 7, "L suffix"},
		{"Age eq 1.5M", 7, "Edm.Decimal"},
		{"Age eq 1.5f", 7, "Edm.Single"},
		{"Age eq 1e999", 7, "out of range"},
		{"Age eq 1.", 7, "digits after '.'"},
		{"Age eq 1e", 7, "exponent"},
		{"Age eq 12ab", 7, "malformed number"},
		{"T eq datetime'2008-07-10'", 5, "invalid datetime"},
		{"T eq datetime'2008-07-10T00:00:00.12345678Z'", 5, "invalid datetime"},
		{"T eq date'2008-07-10T00:00:00Z'", 5, "unknown literal prefix"},
		{"G eq guid'xyz'", 5, "invalid guid"},
		{"X eq X'0'", 5, "invalid binary"},
		{"X eq Name'00'", 5, "unknown literal prefix"},
		{"startswith(Name, 'a')", 0, "functions"},
		{"Name eq null", 8, "null"},
		{"Name eq 'a' and", 15, "expected a property name"},
		{"not", 3, "expected a property name"},
		{"a eq 1 b eq 2", 7, "expected 'and', 'or'"},
		{"a eq -", 5, "unexpected character"},
		{"a eq -INFx", 5, "malformed number"},
		{"a eq -IN", 5, "unexpected character"},
		{"inf eq 1", -1, ""}, // a property named inf
		{strings.Repeat("p", 255) + " eq 1", -1, ""},
		{strings.Repeat("p", 256) + " eq 1", 0, "at most 255"},
		{strings.Repeat("é", 255) + " eq 1", -1, ""}, // 255 characters, 510 bytes
		{"a eq 1 and and", 11, "expected a property name"},
		{"a eq 1 eq 2", 7, "expected 'and', 'or'"},
		{"a\x00 eq 1", 1, "unexpected character"},
		{"a eq '\xff'", -1, ""}, // invalid UTF-8 inside a string is kept as is
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		if c.offset < 0 {
			if err != nil {
				t.Errorf("Parse(%q): %v", c.in, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q) error = %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Offset != c.offset || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("Parse(%q) = offset %d %q, want offset %d containing %q", c.in, se.Offset, se.Msg, c.offset, c.msg)
		}
	}
}
