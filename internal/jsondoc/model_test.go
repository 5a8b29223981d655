package jsondoc

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// This file checks ApplyPatch against a deliberately dumb model: the same
// documented semantics written over map[string]any / []any as decoded by
// encoding/json. Random documents, random operation sequences; the two must
// agree on success or failure and, on success, on the resulting value.

func TestApplyPatchMatchesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	iters := 20000
	if testing.Short() {
		iters = 3000
	}
	var applied, failed int
	for iter := 0; iter < iters; iter++ {
		docVal := randomObject(rng, 3)
		var sb strings.Builder
		writeJSON(rng, &sb, docVal, false)
		doc := []byte(sb.String())
		docCopy := string(doc)

		ops := make([]PatchOp, 1+rng.IntN(3))
		for i := range ops {
			ops[i] = randomOp(rng, docVal)
		}

		got, err := ApplyPatch(doc, ops)
		var model any
		if json.Unmarshal(doc, &model) != nil {
			t.Fatalf("bad doc %s", doc)
		}
		want, modelOK := modelApply(model.(map[string]any), ops)

		if string(doc) != docCopy {
			t.Fatalf("ApplyPatch modified its input")
		}
		if (err == nil) != modelOK {
			t.Fatalf("doc %s\nops %s\nApplyPatch err = %v, model ok = %v", doc, opsJSON(ops), err, modelOK)
		}
		if err != nil {
			failed++
			continue
		}
		applied++
		if !json.Valid(got) {
			t.Fatalf("invalid output %s", got)
		}
		if _, err := Scan(got, nil); err != nil {
			t.Fatalf("Scan rejects output %s: %v", got, err)
		}
		wantJSON, _ := json.Marshal(want)
		if !semanticEqual(got, wantJSON) {
			t.Fatalf("doc %s\nops %s\n got %s\nwant %s", doc, opsJSON(ops), got, wantJSON)
		}
	}
	t.Logf("%d patches applied, %d failed (both agreeing with the model)", applied, failed)
	if applied < iters/10 || failed < iters/10 {
		t.Fatalf("poor coverage: %d applied, %d failed", applied, failed)
	}
}

func opsJSON(ops []PatchOp) string {
	b, _ := json.Marshal(ops)
	return string(b)
}

// randomOp builds an operation that usually targets something near the
// document's real structure, sometimes something absent or malformed.
func randomOp(rng *rand.Rand, doc any) PatchOp {
	kinds := []string{"add", "set", "replace", "remove", "incr", "move"}
	op := PatchOp{Op: kinds[rng.IntN(len(kinds))], Path: randomPointer(rng, doc)}
	switch op.Op {
	case "add", "set", "replace":
		op.Value, _ = json.Marshal(randomValue(rng, 2, 3))
	case "incr":
		if rng.IntN(8) == 0 {
			op.Value = json.RawMessage(`"not a number"`)
		} else {
			op.Value, _ = json.Marshal(float64(rng.IntN(41)-20) / []float64{1, 1, 4}[rng.IntN(3)])
		}
	case "move":
		op.From = randomPointer(rng, doc)
		if rng.IntN(4) == 0 {
			op.Path = op.From + "/x" // a child of from
		}
	}
	return op
}

func randomPointer(rng *rand.Rand, doc any) string {
	var toks []string
	v := doc
	for {
		var next any
		switch c := v.(type) {
		case map[string]any:
			if len(c) > 0 && rng.IntN(5) != 0 {
				for k, e := range c { // random enough for this purpose
					toks, next = append(toks, k), e
					break
				}
			}
		case []any:
			if len(c) > 0 && rng.IntN(5) != 0 {
				i := rng.IntN(len(c))
				toks, next = append(toks, strconv.Itoa(i)), c[i]
			}
		}
		if next == nil || len(toks) > 0 && rng.IntN(3) == 0 {
			break
		}
		v = next
	}
	// Sometimes step beyond the existing structure.
	switch rng.IntN(6) {
	case 0:
		toks = append(toks, testKeys[rng.IntN(len(testKeys))])
	case 1:
		toks = append(toks, []string{"-", "0", "1", "2", "5", "01", "x"}[rng.IntN(7)])
	}
	if len(toks) == 0 {
		toks = []string{testKeys[rng.IntN(len(testKeys))]}
	}
	var sb strings.Builder
	for _, t := range toks {
		sb.WriteByte('/')
		sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return sb.String()
}

// ---- the model ----

func modelApply(doc map[string]any, ops []PatchOp) (any, bool) {
	var root any = doc
	for _, op := range ops {
		var ok bool
		if root, ok = modelOp(root, op); !ok {
			return nil, false
		}
	}
	return root, true
}

func modelPointer(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "/") {
		return nil, false
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || (t[j+1] != '0' && t[j+1] != '1')) {
				return nil, false
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	switch toks[0] {
	case "_rid", "_self", "_etag", "_ts", "_attachments":
		return nil, false
	}
	return toks, true
}

func modelIndex(tok string, n int) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') || len(tok) > 9 {
		return 0, false
	}
	i, err := strconv.Atoi(tok)
	return i, err == nil && i >= 0 && i <= n
}

func modelOp(root any, op PatchOp) (any, bool) {
	path, ok := modelPointer(op.Path)
	if !ok {
		return nil, false
	}
	var val any
	switch op.Op {
	case "add", "set", "replace", "incr":
		if op.Value == nil || json.Unmarshal(op.Value, &val) != nil {
			return nil, false
		}
		if _, isNum := val.(float64); op.Op == "incr" && !isNum {
			return nil, false
		}
	}
	switch op.Op {
	case "add", "set":
		return modelEdit(root, path, func(parent any, last string) (any, bool) {
			return modelPut(parent, last, val, op.Op == "add")
		})
	case "replace":
		return modelEdit(root, path, func(parent any, last string) (any, bool) {
			switch p := parent.(type) {
			case map[string]any:
				if _, ok := p[last]; !ok {
					return nil, false
				}
				p[last] = val
				return p, true
			case []any:
				i, ok := modelIndex(last, len(p)-1)
				if !ok {
					return nil, false
				}
				p[i] = val
				return p, true
			}
			return nil, false
		})
	case "remove":
		root, _, ok := modelTake(root, path)
		return root, ok
	case "incr":
		d := val.(float64)
		return modelEdit(root, path, func(parent any, last string) (any, bool) {
			var cur any
			var found bool
			switch p := parent.(type) {
			case map[string]any:
				if cur, found = p[last]; !found {
					p[last] = d
					return p, true
				}
				n, isNum := cur.(float64)
				if !isNum || math.IsInf(n+d, 0) {
					return nil, false
				}
				p[last] = n + d
				return p, true
			case []any:
				i, ok := modelIndex(last, len(p)-1)
				if !ok {
					return nil, false
				}
				n, isNum := p[i].(float64)
				if !isNum {
					return nil, false
				}
				p[i] = n + d
				return p, true
			}
			return nil, false
		})
	case "move":
		from, ok := modelPointer(op.From)
		if !ok || op.From == "" {
			return nil, false
		}
		if len(path) > len(from) && strings.HasPrefix(strings.Join(path, "\x00")+"\x00", strings.Join(from, "\x00")+"\x00") {
			return nil, false
		}
		if strings.Join(path, "\x00") == strings.Join(from, "\x00") && len(path) == len(from) {
			_, _, ok := modelTake(modelClone(root), from)
			return root, ok
		}
		root, v, ok := modelTake(root, from)
		if !ok {
			return nil, false
		}
		return modelEdit(root, path, func(parent any, last string) (any, bool) {
			return modelPut(parent, last, v, false)
		})
	}
	return nil, false
}

// modelEdit walks to the parent of path and lets fn change it, rebuilding
// the slices along the way.
func modelEdit(v any, path []string, fn func(parent any, last string) (any, bool)) (any, bool) {
	if len(path) == 1 {
		return fn(v, path[0])
	}
	switch c := v.(type) {
	case map[string]any:
		child, ok := c[path[0]]
		if !ok {
			return nil, false
		}
		nc, ok := modelEdit(child, path[1:], fn)
		if !ok {
			return nil, false
		}
		c[path[0]] = nc
		return c, true
	case []any:
		i, ok := modelIndex(path[0], len(c)-1)
		if !ok {
			return nil, false
		}
		nc, ok := modelEdit(c[i], path[1:], fn)
		if !ok {
			return nil, false
		}
		c[i] = nc
		return c, true
	}
	return nil, false
}

func modelPut(parent any, last string, val any, insert bool) (any, bool) {
	switch p := parent.(type) {
	case map[string]any:
		p[last] = val
		return p, true
	case []any:
		if last == "-" {
			return append(p, val), true
		}
		i, ok := modelIndex(last, len(p))
		if !ok {
			return nil, false
		}
		if insert || i == len(p) {
			p = append(p, nil)
			copy(p[i+1:], p[i:])
			p[i] = val
			return p, true
		}
		p[i] = val
		return p, true
	}
	return nil, false
}

func modelTake(root any, path []string) (any, any, bool) {
	var taken any
	root, ok := modelEdit(root, path, func(parent any, last string) (any, bool) {
		switch p := parent.(type) {
		case map[string]any:
			v, ok := p[last]
			if !ok {
				return nil, false
			}
			taken = v
			delete(p, last)
			return p, true
		case []any:
			i, ok := modelIndex(last, len(p)-1)
			if !ok {
				return nil, false
			}
			taken = p[i]
			return append(p[:i:i], p[i+1:]...), true
		}
		return nil, false
	})
	return root, taken, ok
}

func modelClone(v any) any {
	b, _ := json.Marshal(v)
	var c any
	_ = json.Unmarshal(b, &c)
	return c
}
