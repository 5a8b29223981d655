package ast

// Precedence levels of expressions, loosest first. A higher level binds
// tighter. The parser climbs this table and the printer parenthesizes by
// it, so the two cannot disagree. The order is sql.g4's (see package parser
// for the derivation); the shift operators, absent from sql.g4, sit between
// additive and relational as in C# and JavaScript.
const (
	PrecCoalesce       = 1  // a ?? b            left-assoc
	PrecConditional    = 2  // a ? b : c         right-assoc
	PrecOr             = 3  // OR                left-assoc
	PrecAnd            = 4  // AND               left-assoc
	PrecPredicate      = 5  // IN, LIKE, BETWEEN non-associative
	PrecConcat         = 6  // ||                left-assoc
	PrecBitOr          = 7  // |
	PrecBitXor         = 8  // ^
	PrecBitAnd         = 9  // &
	PrecEquality       = 10 // = != <>
	PrecRelational     = 11 // < > <= >=
	PrecShift          = 12 // << >> >>>
	PrecAdditive       = 13 // + -
	PrecMultiplicative = 14 // * / %
	PrecUnary          = 15 // - + ~ NOT (prefix)
	PrecPrimary        = 16 // literals, names, calls, x.y, x[y], (...)
)

// Prec returns the precedence level of op.
func (op BinaryOp) Prec() int {
	switch op {
	case Mul, Div, Mod:
		return PrecMultiplicative
	case Add, Sub:
		return PrecAdditive
	case Shl, Shr, ShrZero:
		return PrecShift
	case Lt, Gt, Le, Ge:
		return PrecRelational
	case Eq, Ne:
		return PrecEquality
	case BitAnd:
		return PrecBitAnd
	case BitXor:
		return PrecBitXor
	case BitOr:
		return PrecBitOr
	case Concat:
		return PrecConcat
	case And:
		return PrecAnd
	case Or:
		return PrecOr
	case Coalesce:
		return PrecCoalesce
	}
	panic("BUG: ast: unknown binary operator")
}

// Prec returns the precedence level of e: the loosest operator at its top.
func Prec(e Expr) int {
	switch e := e.(type) {
	case *Binary:
		return e.Op.Prec()
	case *Conditional:
		return PrecConditional
	case *In, *Between, *Like:
		return PrecPredicate
	case *Unary:
		return PrecUnary
	}
	return PrecPrimary
}

// operandPrec returns the lowest precedence the left and right operands of
// a binary operator of precedence p may have without parentheses. Every
// binary operator, ?? included, is left-associative; the right operand of ??
// may thus be a ?: unparenthesized, which binds tighter.
func operandPrec(p int) (left, right int) { return p, p + 1 }

// Minimum precedences of the operands of the other composite expressions.
const (
	condMin      = PrecOr          // the condition of ?: is a logical expression
	elseMin      = PrecConditional // ?: is right-associative
	predicateMin = PrecConcat      // IN/LIKE/BETWEEN operands are binary expressions
	unaryMin     = PrecUnary
	postfixMin   = PrecPrimary
)
