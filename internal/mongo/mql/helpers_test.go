package mql

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// doc builds a bson.D from alternating keys and values.
func doc(kv ...any) bson.D {
	d := bson.D{}
	for i := 0; i+1 < len(kv); i += 2 {
		d = append(d, bson.E{Key: kv[i].(string), Value: kv[i+1]})
	}
	return d
}

func arr(vs ...any) bson.A { return append(bson.A{}, vs...) }

func dec(t testing.TB, s string) bson.Decimal128 {
	t.Helper()
	d, err := bson.ParseDecimal128(s)
	if err != nil {
		t.Fatalf("ParseDecimal128(%q): %v", s, err)
	}
	return d
}

// wantCode asserts err is an *Error with the given code.
func wantCode(t *testing.T, err error, code int32) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error (want code %d)", err, code)
	}
	if e.Code != code {
		t.Fatalf("error code %d (%s), want %d", e.Code, e.Msg, code)
	}
}

// roundTrip marshals and unmarshals a document, so tests see values exactly as decoded from the wire.
func roundTrip(t testing.TB, d bson.D) bson.D {
	t.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var out bson.D
	if err := bson.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestErrorNames(t *testing.T) {
	cases := map[int32]string{
		CodeBadValue: "BadValue", CodeTypeMismatch: "TypeMismatch", CodeConflictingUpdate: "ConflictingUpdateOperators",
		CodeRegexInvalid: "Location51091", CodeExceededMemoryLimit: "QueryExceededMemoryLimitNoDiskUseAllowed", 40324: "Location40324",
	}
	for code, name := range cases {
		e := newError(code, "x %d", 1)
		if e.CodeName != name || e.Code != code || e.Msg != "x 1" {
			t.Errorf("newError(%d) = %+v, want code name %s", code, e, name)
		}
	}
	if got := badValue("m").Error(); got != "BadValue: m" {
		t.Errorf("Error() = %q", got)
	}
}
