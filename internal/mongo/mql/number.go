package mql

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// Numeric arithmetic with MongoDB's type promotion: int32 op int32 stays int32 unless it overflows
// (then int64); int64 overflowing becomes float64 in expressions (and an error in updates); any float64
// makes a float64, any Decimal128 a Decimal128.

type numKind int

const (
	kindInt32 numKind = iota
	kindInt64
	kindDouble
	kindDecimal
)

func kindOf(v any) numKind {
	switch v.(type) {
	case int32:
		return kindInt32
	case int64, int:
		return kindInt64
	case float64:
		return kindDouble
	}
	return kindDecimal
}

func decimalToFloat(d bson.Decimal128) (float64, bool) {
	f, err := strconv.ParseFloat(d.String(), 64)
	if err != nil {
		// ParseFloat reports out-of-range values with ±Inf or 0 and an error; keep that value.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// toBigFloat converts a number to a big.Float (NaN is not representable: ok=false).
func toBigFloat(v any) (*big.Float, bool) {
	if isNaN(v) {
		return nil, false
	}
	if s := infSign(v); s != 0 {
		return new(big.Float).SetInf(s < 0), true
	}
	f := new(big.Float).SetPrec(256)
	switch x := v.(type) {
	case bson.Decimal128:
		f.SetRat(exactRat(x))
		return f, true
	}
	f.SetRat(exactRat(v))
	return f, true
}

// fromBigFloat converts a big.Float to a Decimal128 rounded to 34 significant digits.
func fromBigFloat(f *big.Float) bson.Decimal128 {
	if f.IsInf() {
		if f.Sign() < 0 {
			d, _ := bson.ParseDecimal128("-Infinity")
			return d
		}
		d, _ := bson.ParseDecimal128("Infinity")
		return d
	}
	// 34 significant digits, trailing zeros of the significand dropped ("1.1", not "1.100...0").
	text := f.Text('e', 33)
	if mant, exp, ok := strings.Cut(text, "e"); ok && strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		text = mant + "e" + exp
	}
	d, err := bson.ParseDecimal128(text)
	if err != nil {
		d, _ = bson.ParseDecimal128("NaN")
	}
	return d
}

func decimalNaN() bson.Decimal128 {
	d, _ := bson.ParseDecimal128("NaN")
	return d
}

// arith applies op ('+', '-', '*') to two numbers. overflow reports an int64 overflow (the result is
// then the float64 value).
func arith(op byte, a, b any) (res any, overflow bool) {
	k := max(kindOf(a), kindOf(b))
	switch k {
	case kindInt32, kindInt64:
		x, _ := intValue(a)
		y, _ := intValue(b)
		var r int64
		ok := true
		switch op {
		case '+':
			r = x + y
			ok = !((x > 0 && y > 0 && r < 0) || (x < 0 && y < 0 && r >= 0))
		case '-':
			r = x - y
			ok = !((x >= 0 && y < 0 && r < 0) || (x < 0 && y > 0 && r >= 0))
		case '*':
			r = x * y
			ok = x == 0 || (r/x == y && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64))
		}
		if !ok {
			fx, fy := float64(x), float64(y)
			return floatOp(op, fx, fy), true
		}
		if k == kindInt32 && r >= math.MinInt32 && r <= math.MaxInt32 {
			return int32(r), false
		}
		return r, false
	case kindDouble:
		x, _ := Float(a)
		y, _ := Float(b)
		return floatOp(op, x, y), false
	}
	x, okx := toBigFloat(a)
	y, oky := toBigFloat(b)
	if !okx || !oky {
		return decimalNaN(), false
	}
	r := new(big.Float).SetPrec(256)
	defer func() {
		if recover() != nil { // big.Float panics on Inf-Inf and 0*Inf (ErrNaN)
			res = decimalNaN()
		}
	}()
	switch op {
	case '+':
		r.Add(x, y)
	case '-':
		r.Sub(x, y)
	case '*':
		r.Mul(x, y)
	}
	return fromBigFloat(r), false
}

func floatOp(op byte, x, y float64) float64 {
	switch op {
	case '+':
		return x + y
	case '-':
		return x - y
	}
	return x * y
}

// maxFormatted bounds the length of a value rendered into an error message.
const maxFormatted = 512

// formatValue renders a value for an error message, cut off after maxFormatted bytes.
func formatValue(v any) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	if b.Len() > maxFormatted {
		return b.String()[:maxFormatted] + "..."
	}
	return b.String()
}

func writeValue(b *strings.Builder, v any, depth int) {
	if b.Len() > maxFormatted || depth > maxDepth {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case string:
		b.WriteString(strconv.Quote(x))
	case nil:
		b.WriteString("null")
	case bson.D:
		b.WriteByte('{')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if b.Len() > maxFormatted {
				b.WriteString("...")
				break
			}
			b.WriteString(e.Key)
			b.WriteString(": ")
			writeValue(b, e.Value, depth+1)
		}
		b.WriteByte('}')
	case bson.A:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if b.Len() > maxFormatted {
				b.WriteString("...")
				break
			}
			writeValue(b, e, depth+1)
		}
		b.WriteByte(']')
	case bson.Binary:
		fmt.Fprintf(b, "BinData(%d, %d bytes)", x.Subtype, len(x.Data))
	case bson.CodeWithScope:
		b.WriteString("Code(...)")
	default:
		s := fmt.Sprint(v)
		if len(s) > maxFormatted {
			s = s[:maxFormatted]
		}
		b.WriteString(s)
	}
}

func bigFloat() *big.Float { return new(big.Float).SetPrec(256) }
