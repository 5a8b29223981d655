package lang

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Format writes a traversal as canonical gremlin-lang text: single-quoted
// strings, no spaces, constants with their class (T.id, Order.desc),
// predicates with theirs (P.gt(3), TextP.startingWith('a')), nested
// traversals from __, int64 with suffix L, float32 with f, float64 always
// with a '.' or an exponent, *big.Int with n, *big.Float with m. For every
// tree Parse returns, Parse(Format(t)) returns a tree equal to t (Equal).
func Format(t *Traversal) string {
	var b strings.Builder
	writeTraversal(&b, t)
	return b.String()
}

// FormatValue writes one Value as Format writes it inside a traversal.
func FormatValue(v Value) string {
	var b strings.Builder
	writeValue(&b, v)
	return b.String()
}

func writeTraversal(b *strings.Builder, t *Traversal) {
	if t == nil {
		b.WriteString("null")
		return
	}
	if t.Anonymous {
		b.WriteString("__")
	} else {
		b.WriteString("g")
		for _, s := range t.Source {
			b.WriteByte('.')
			writeStep(b, s)
		}
	}
	for _, s := range t.Steps {
		b.WriteByte('.')
		writeStep(b, s)
	}
	if t.Terminal.Name != "" {
		b.WriteByte('.')
		writeStep(b, t.Terminal)
	}
}

func writeStep(b *strings.Builder, s Step) {
	b.WriteString(s.Name)
	writeArgs(b, s.Args)
}

func writeArgs(b *strings.Builder, args []Value) {
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		writeValue(b, a)
	}
	b.WriteByte(')')
}

func writeValue(b *strings.Builder, v Value) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int32:
		b.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
		b.WriteByte('L')
	case float32:
		writeFloat(b, float64(x), 32, "f")
	case float64:
		writeFloat(b, x, 64, "")
	case *big.Int:
		if x == nil {
			b.WriteString("null")
			return
		}
		b.WriteString(x.String())
		b.WriteByte('n')
	case *big.Float:
		if x == nil {
			b.WriteString("null")
			return
		}
		b.WriteString(x.Text('g', -1))
		b.WriteByte('m')
	case string:
		b.WriteString(quoteString(x))
	case UUID:
		b.WriteString("UUID(")
		b.WriteString(quoteString(string(x)))
		b.WriteByte(')')
	case time.Time:
		b.WriteString("datetime(")
		b.WriteString(quoteString(x.UTC().Format(time.RFC3339Nano)))
		b.WriteByte(')')
	case []Value:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte(']')
	case Set:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeValue(b, e)
		}
		b.WriteByte('}')
	case *Map:
		if x == nil {
			b.WriteString("null")
			return
		}
		if len(x.Entries) == 0 {
			b.WriteString("[:]")
			return
		}
		b.WriteByte('[')
		for i, e := range x.Entries {
			if i > 0 {
				b.WriteByte(',')
			}
			writeMapKey(b, e.Key)
			b.WriteByte(':')
			writeValue(b, e.Value)
		}
		b.WriteByte(']')
	case *Traversal:
		writeTraversal(b, x)
	case P:
		writeP(b, x)
	case CardinalityValue:
		b.WriteString("Cardinality.")
		b.WriteString(x.Cardinality)
		b.WriteByte('(')
		writeValue(b, x.Value)
		b.WriteByte(')')
	case Token:
		b.WriteString(x.Type)
		b.WriteByte('.')
		b.WriteString(x.Name)
	case Strategy:
		if x.Config == nil || len(x.Config.Entries) == 0 {
			b.WriteString(x.Name)
			return
		}
		b.WriteString("new ")
		b.WriteString(x.Name)
		b.WriteByte('(')
		for i, e := range x.Config.Entries {
			if i > 0 {
				b.WriteByte(',')
			}
			if k, ok := e.Key.(string); ok && isIdentifier(k) {
				b.WriteString(k)
			} else {
				// Not expressible in the grammar; written so that the
				// text shows what the tree holds.
				writeValue(b, e.Key)
			}
			b.WriteByte(':')
			writeValue(b, e.Value)
		}
		b.WriteByte(')')
	default:
		// Not a tree Value; written so that logs show it.
		fmt.Fprintf(b, "/* %T */null", v)
	}
}

// writeMapKey writes a key so that it reads back as the same value: strings
// and numbers as they are, anything else in parentheses.
func writeMapKey(b *strings.Builder, k Value) {
	switch k.(type) {
	case string, int32, int64, float32, float64, *big.Int, *big.Float:
		writeValue(b, k)
	default:
		b.WriteByte('(')
		writeValue(b, k)
		b.WriteByte(')')
	}
}

func writeFloat(b *strings.Builder, f float64, bits int, suffix string) {
	switch {
	case math.IsNaN(f):
		b.WriteString("NaN")
		return
	case math.IsInf(f, 1):
		b.WriteString("Infinity")
		return
	case math.IsInf(f, -1):
		b.WriteString("-Infinity")
		return
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	b.WriteString(s)
	b.WriteString(suffix)
}

func writeP(b *strings.Builder, p P) {
	switch p.Op {
	case "and", "or":
		if len(p.Args) >= 2 {
			for i, a := range p.Args {
				if i > 0 {
					b.WriteString("." + p.Op + "(")
				}
				// A left operand that is itself p.Op (only bytecode
				// builds one) reads back flattened, as TinkerPop's AndP
				// and OrP flatten it.
				writeValue(b, a)
				if i > 0 {
					b.WriteByte(')')
				}
			}
			return
		}
	case "within", "without":
		b.WriteString("P.")
		b.WriteString(p.Op)
		if len(p.Args) == 1 {
			if _, ok := p.Args[0].([]Value); ok {
				// within([x]) reads back as within(x): wrap once more.
				b.WriteByte('(')
				writeValue(b, p.Args)
				b.WriteByte(')')
				return
			}
		}
		writeArgs(b, p.Args)
		return
	}
	if textPMethods[p.Op] != "" {
		b.WriteString("TextP.")
	} else {
		b.WriteString("P.")
	}
	b.WriteString(p.Op)
	writeArgs(b, p.Args)
}

// quoteString writes s as a single-quoted gremlin string literal.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'':
			b.WriteString(`\'`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if (i == 0 && !isIdentStart(r)) || !isIdentPart(r) {
			return false
		}
	}
	return s != ""
}

// String returns Format(t).
func (t *Traversal) String() string { return Format(t) }

// String returns the step as Format writes it: name(args).
func (s Step) String() string {
	var b strings.Builder
	writeStep(&b, s)
	return b.String()
}

// String returns the predicate as Format writes it: P.gt(3).
func (p P) String() string { return FormatValue(p) }

// String returns the constant as Format writes it: T.id.
func (t Token) String() string { return t.Type + "." + t.Name }

// String returns the strategy as Format writes it.
func (s Strategy) String() string { return FormatValue(s) }
