package engine

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// cmdWrite creates n items of the given size and prints how many were
// written and what they were charged.
func (env *scriptEnv) cmdWrite(t *testing.T, d *datadriven.TestData) string {
	var pk string
	var n int
	d.ScanArgs(t, "pk", &pk)
	d.ScanArgs(t, "n", &n)
	size := sizeArg(t, d, "size", 0)
	keys := sizeArg(t, d, "keys", 0)
	var charge float64
	for i := range n {
		k := pk
		if keys > 0 {
			k = fmt.Sprint(pk, i%keys)
		}
		env.nextID++
		id := fmt.Sprint(env.nextID)
		r, err := env.execute(OpCreate, k, id, size)
		if err == nil {
			err = r.Err
		}
		if err != nil {
			return fmt.Sprintf("error: item %d of %d (pk %s, id %s): %v", i+1, n, k, id, err)
		}
		charge += r.Charge
	}
	return fmt.Sprintf("%d items: %.2f RU", n, charge)
}

// cmdCharge runs one operation and prints its outcome and charge.
func (env *scriptEnv) cmdCharge(t *testing.T, d *datadriven.TestData) string {
	var op, pk string
	d.ScanArgs(t, "op", &op)
	d.ScanArgs(t, "pk", &pk)
	size := sizeArg(t, d, "size", 0)
	kinds := map[string]OpKind{"create": OpCreate, "upsert": OpUpsert, "replace": OpReplace, "read": OpRead, "delete": OpDelete}
	kind, ok := kinds[op]
	if !ok {
		d.Fatalf(t, "unknown op %q", op)
	}
	id := stringArg(t, d, "id", "")
	if id == "" {
		if kind != OpCreate && kind != OpUpsert {
			d.Fatalf(t, "op=%s needs an id", op)
		}
		env.nextID++
		id = fmt.Sprint(env.nextID)
	}
	r, err := env.execute(kind, pk, id, size)
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprintf("%s: %.2f RU", outcome(kind, r), r.Charge)
}

// execute runs one operation on the item pk/id (with a body of size bytes
// for a write) and records which items exist.
func (env *scriptEnv) execute(kind OpKind, pk, id string, size int) (OpResult, error) {
	c := env.c
	var op Op
	var err error
	switch kind {
	case OpRead, OpDelete:
		op, err = c.PrepareKeyed(kind, id, key(pk), true)
	default:
		op, err = c.PrepareWrite(kind, itemBody(pk, id, size), key(pk), true)
	}
	if err != nil {
		return OpResult{}, err
	}
	var r OpResult
	if kind == OpRead {
		r, _, err = c.ReadItem(op)
		if r.Err != nil {
			err = nil // the read's own failure, in r.Err
		}
	} else {
		var res []OpResult
		res, _, err = c.Execute(&Command{Ops: []Op{op}}, "")
		if err == nil {
			r = res[0]
		}
	}
	if err == nil && r.Err == nil {
		switch kind {
		case OpDelete:
			delete(env.live, scriptItem{pk, id})
		case OpCreate, OpUpsert, OpReplace:
			env.live[scriptItem{pk, id}] = true
		}
	}
	return r, err
}

// cmdVerify reads back every live item and compares each partition's read
// feed with its item count.
func (env *scriptEnv) cmdVerify(t *testing.T, d *datadriven.TestData) string {
	var out strings.Builder
	for it := range env.live {
		op, err := env.c.PrepareKeyed(OpRead, it.id, key(it.pk), true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.c.ReadItem(op); err != nil {
			fmt.Fprintf(&out, "error: read pk=%s id=%s: %v\n", it.pk, it.id, err)
		}
	}
	parts := env.c.Partitions()
	var fed int64
	for _, p := range parts {
		var docs int64
		for after := []byte(nil); ; {
			f, err := env.c.ReadFeed(p.ID(), after, 0)
			if err != nil {
				t.Fatal(err)
			}
			docs += int64(len(f.Docs))
			if after = f.Next; after == nil {
				break
			}
		}
		fed += docs
		if n := p.items.Load(); docs != n {
			fmt.Fprintf(&out, "error: range %s: the feed has %d items, the count says %d\n", p.ID(), docs, n)
		}
	}
	if fed != int64(len(env.live)) {
		fmt.Fprintf(&out, "error: the feeds hold %d items, the script wrote %d\n", fed, len(env.live))
	}
	if out.Len() > 0 {
		return out.String()
	}
	return fmt.Sprintf("%d items read back; the feeds of %d ranges hold them all", len(env.live), len(parts))
}
