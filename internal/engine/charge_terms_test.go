package engine

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/throughput"
)

// TestWriteChargesFollowTerms checks that writes are priced by the index
// terms written under the container's policy: a create by its terms, a
// replace by the property paths whose term changed, a patch likewise plus
// its operations, a delete by the old version's terms.
func TestWriteChargesFollowTerms(t *testing.T) {
	e, st := testEngine(t, t.TempDir())
	defer st.Close()
	defer e.Close() // before its directory goes: a running engine still writes there
	c := mustContainer(t, e, 400)
	run := func(op Op, err error) OpResult {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		res, _, err := c.Execute(&Command{Ops: []Op{op}}, "")
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		return res[0]
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: charge %.4f, want %.4f", what, got, want)
		}
	}
	// id, pk, a (an object), a/b, a/c (an array): 5 terms.
	v1 := []byte(`{"id":"x","pk":"p","a":{"b":1,"c":[1,2,3]}}`)
	w, err := c.PrepareWrite(OpCreate, v1, key("p"), true)
	if w.terms == nil || w.terms.body() != 5 {
		t.Fatalf("prepared terms %+v, want 5", w.terms)
	}
	r := run(w, err)
	near("create", r.Charge, throughput.WriteCharge(len(r.Doc), 5))
	old := len(r.Doc)

	// The same body again: no term changes.
	r = run(c.PrepareWrite(OpReplace, v1, key("p"), true))
	near("identical replace", r.Charge, throughput.ReplaceCharge(old, len(r.Doc), 0))
	old = len(r.Doc)

	// a/b changes value, a/c goes, a/d comes: three paths.
	r = run(c.PrepareWrite(OpReplace, []byte(`{"id":"x","pk":"p","a":{"b":2,"d":"z"}}`), key("p"), true))
	near("replace", r.Charge, throughput.ReplaceCharge(old, len(r.Doc), 3))
	old = len(r.Doc)

	p, err := c.PrepareKeyed(OpPatch, "x", key("p"), true)
	p.Patch = []jsondoc.PatchOp{{Op: "set", Path: "/a/b", Value: json.RawMessage(`3`)}, {Op: "set", Path: "/a/d", Value: json.RawMessage(`"z"`)}}
	r = run(p, err)
	near("patch", r.Charge, throughput.PatchCharge(old, len(r.Doc), 1, 2))

	d, err := c.PrepareKeyed(OpDelete, "x", key("p"), true)
	r = run(d, err)
	near("delete", r.Charge, throughput.DeleteCharge(len(r.Doc), 5)) // id, pk, a, a/b, a/d
	checkIndex(t, c)
}
