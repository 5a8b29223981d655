package jsondoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// testKeys are the member names random documents draw from: few enough that
// random patch paths hit them, with characters that need pointer escapes
// (~ and /), JSON escapes, non-ASCII, and a system property.
var testKeys = []string{"id", "a", "b", "c", "x", "~", "/", "a/b", "~1", "é", "\"q\"", "", "_rid"}

// randomValue returns a random JSON value as encoding/json would decode it
// (map[string]any, []any, float64, string, bool, nil). Objects are at most
// maxDepth deep.
func randomValue(rng *rand.Rand, depth, maxDepth int) any {
	k := rng.IntN(8)
	if depth >= maxDepth {
		k = 2 + rng.IntN(6)
	}
	switch k {
	case 0:
		m := map[string]any{}
		for n := rng.IntN(5); n > 0; n-- {
			m[testKeys[rng.IntN(len(testKeys))]] = randomValue(rng, depth+1, maxDepth)
		}
		return m
	case 1:
		a := []any{}
		for n := rng.IntN(4); n > 0; n-- {
			a = append(a, randomValue(rng, depth+1, maxDepth))
		}
		return a
	case 2, 3:
		if rng.IntN(3) == 0 {
			return float64(rng.IntN(2001)-1000) / 8 // exact in binary
		}
		return float64(rng.IntN(21) - 10)
	case 4, 5:
		return []string{"", "s", "é😀", "a\"b", "line\nbreak", "\u2028", "x/y"}[rng.IntN(7)]
	case 6:
		return rng.IntN(2) == 0
	}
	return nil
}

// randomObject is randomValue forced to be an object.
func randomObject(rng *rand.Rand, maxDepth int) map[string]any {
	for {
		if m, ok := randomValue(rng, 0, maxDepth).(map[string]any); ok {
			return m
		}
	}
}

// writeJSON writes v as JSON text with random whitespace, random member
// order, random string escaping and random number spelling. With dups set,
// objects sometimes repeat a member name (first occurrence = the value of v).
func writeJSON(rng *rand.Rand, sb *strings.Builder, v any, dups bool) {
	ws := func() {
		if rng.IntN(4) == 0 {
			sb.WriteString([]string{" ", "\n", "\t", "\r\n  "}[rng.IntN(4)])
		}
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			writeString(rng, sb, k)
			ws()
			sb.WriteByte(':')
			ws()
			writeJSON(rng, sb, v[k], dups)
			ws()
		}
		if dups && len(keys) > 0 && rng.IntN(5) == 0 {
			sb.WriteByte(',')
			writeString(rng, sb, keys[rng.IntN(len(keys))])
			sb.WriteByte(':')
			writeJSON(rng, sb, randomValue(rng, 3, 4), dups)
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				sb.WriteByte(',')
			}
			ws()
			writeJSON(rng, sb, e, dups)
			ws()
		}
		sb.WriteByte(']')
	case string:
		writeString(rng, sb, v)
	case float64:
		switch {
		case v == float64(int64(v)) && rng.IntN(4) == 0:
			fmt.Fprintf(sb, "%dE0", int64(v))
		case rng.IntN(4) == 0:
			sb.WriteString(strconv.FormatFloat(v, 'e', -1, 64))
		default:
			sb.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
		}
	case bool:
		sb.WriteString(strconv.FormatBool(v))
	case nil:
		sb.WriteString("null")
	default:
		panic(fmt.Sprintf("writeJSON: %T", v))
	}
}

func writeString(rng *rand.Rand, sb *strings.Builder, s string) {
	if rng.IntN(4) != 0 {
		b, _ := json.Marshal(s)
		sb.Write(b)
		return
	}
	sb.WriteByte('"')
	for _, r := range s {
		if r > 0xffff {
			r1, r2 := 0xd800+((r-0x10000)>>10), 0xdc00+((r-0x10000)&0x3ff)
			fmt.Fprintf(sb, `\u%04X\u%04x`, r1, r2)
		} else {
			fmt.Fprintf(sb, `\u%04x`, r)
		}
	}
	sb.WriteByte('"')
}

// randomDocJSON returns the text of a random object, possibly with duplicate
// member names.
func randomDocJSON(rng *rand.Rand) string {
	var sb strings.Builder
	writeJSON(rng, &sb, randomObject(rng, 4), true)
	return sb.String()
}

// jsonEqual compares values decoded by encoding/json.
func jsonEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// semanticEqual reports whether two JSON texts decode to equal values.
func semanticEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// hasDuplicateNames reports whether any object in data repeats a member name.
// breaksDocumentRules reports whether valid JSON data breaks a rule Scan
// adds to the syntax: nesting, number range, UTF-8, duplicate names.
func breaksDocumentRules(data []byte) bool {
	if !utf8.Valid(data) || hasDuplicateNames(data) || nestingDepth(data) > MaxDepth {
		return true
	}
	var v any
	return json.Unmarshal(data, &v) != nil // a number beyond float64
}

// nestingDepth returns the deepest nesting of arrays and objects in valid
// JSON data.
func nestingDepth(data []byte) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func hasDuplicateNames(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		obj       bool
		expectKey bool
		keys      map[string]bool
	}
	var st []*frame
	valueDone := func() {
		if len(st) > 0 && st[len(st)-1].obj {
			st[len(st)-1].expectKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if len(st) > 0 {
			if top := st[len(st)-1]; top.obj && top.expectKey {
				if tok == json.Delim('}') {
					st = st[:len(st)-1]
					valueDone()
					continue
				}
				k := tok.(string)
				if top.keys[k] {
					return true
				}
				top.keys[k] = true
				top.expectKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			st = append(st, &frame{obj: true, expectKey: true, keys: map[string]bool{}})
		case json.Delim('['):
			st = append(st, &frame{})
		case json.Delim(']'), json.Delim('}'):
			st = st[:len(st)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
