// Package token defines the lexical tokens of the Cosmos DB NoSQL query
// language and source positions. It is the first stage of the front end
// (token → scanner → ast → parser); see package parser for the manual.
package token

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in the query text. Offset is the byte offset from the
// start (0-based); Line and Col are 1-based, and Col counts bytes from the
// start of the line, as in go/token. The zero Pos means "no position".
type Pos struct {
	Offset int
	Line   int
	Col    int
}

// IsValid reports whether p is a real position (Line >= 1).
func (p Pos) IsValid() bool { return p.Line > 0 }

// String formats p as "line L, column C", the form used in error messages.
func (p Pos) String() string {
	if !p.IsValid() {
		return "unknown position"
	}
	return fmt.Sprintf("line %d, column %d", p.Line, p.Col)
}

// Kind is the kind of a token.
type Kind uint8

// Token kinds. The keyword kinds (KeywordFirst < k < KeywordLast) mirror the
// K_ lexer rules of sql.g4.
const (
	Illegal Kind = iota
	EOF

	// Literals and names.
	Ident  // LEX_IDENTIFIER: [a-zA-Z_][a-zA-Z_0-9]*
	Param  // PARAMETER: '@' LEX_IDENTIFIER
	String // STRING_LITERAL, single or double quoted
	Number // NUMERIC_LITERAL, unsigned; or 0x hex (extension)

	// Operators and punctuation.
	Eq       // =
	Ne       // !=
	LtGt     // <> (extension, same meaning as !=)
	Lt       // <
	Le       // <=
	Gt       // >
	Ge       // >=
	Plus     // +
	Minus    // -
	Star     // *
	Slash    // /
	Percent  // %
	Concat   // ||
	BitOr    // |
	BitAnd   // &
	BitXor   // ^
	Tilde    // ~
	Shl      // << (extension)
	Shr      // >> (extension)
	ShrZero  // >>> (extension)
	Coalesce // ??
	Question // ?
	Colon    // :
	Dot      // .
	Comma    // ,
	LParen   // (
	RParen   // )
	LBrack   // [
	RBrack   // ]
	LBrace   // {
	RBrace   // }

	KeywordFirst
	// Case-insensitive keywords.
	All
	And
	Array
	As
	Asc
	Between
	By
	Desc
	Distinct
	Escape
	Exists
	First
	From
	Group
	In
	Join
	Last
	Left
	Like
	Limit
	Not
	Offset
	Or
	Order
	Rank
	Right
	Select
	Top
	Value
	Where
	// Case-sensitive keywords: sql.g4 spells them in lowercase only.
	False
	Null
	True
	Udf
	Undefined
	KeywordLast
)

var names = [...]string{
	Illegal:   "illegal",
	EOF:       "end of query",
	Ident:     "identifier",
	Param:     "parameter",
	String:    "string",
	Number:    "number",
	Eq:        "=",
	Ne:        "!=",
	LtGt:      "<>",
	Lt:        "<",
	Le:        "<=",
	Gt:        ">",
	Ge:        ">=",
	Plus:      "+",
	Minus:     "-",
	Star:      "*",
	Slash:     "/",
	Percent:   "%",
	Concat:    "||",
	BitOr:     "|",
	BitAnd:    "&",
	BitXor:    "^",
	Tilde:     "~",
	Shl:       "<<",
	Shr:       ">>",
	ShrZero:   ">>>",
	Coalesce:  "??",
	Question:  "?",
	Colon:     ":",
	Dot:       ".",
	Comma:     ",",
	LParen:    "(",
	RParen:    ")",
	LBrack:    "[",
	RBrack:    "]",
	LBrace:    "{",
	RBrace:    "}",
	All:       "ALL",
	And:       "AND",
	Array:     "ARRAY",
	As:        "AS",
	Asc:       "ASC",
	Between:   "BETWEEN",
	By:        "BY",
	Desc:      "DESC",
	Distinct:  "DISTINCT",
	Escape:    "ESCAPE",
	Exists:    "EXISTS",
	First:     "FIRST",
	From:      "FROM",
	Group:     "GROUP",
	In:        "IN",
	Join:      "JOIN",
	Last:      "LAST",
	Left:      "LEFT",
	Like:      "LIKE",
	Limit:     "LIMIT",
	Not:       "NOT",
	Offset:    "OFFSET",
	Or:        "OR",
	Order:     "ORDER",
	Rank:      "RANK",
	Right:     "RIGHT",
	Select:    "SELECT",
	Top:       "TOP",
	Value:     "VALUE",
	Where:     "WHERE",
	False:     "false",
	Null:      "null",
	True:      "true",
	Udf:       "udf",
	Undefined: "undefined",
}

// String returns the spelling of an operator or keyword (keywords in their
// canonical case) or a description of the other kinds ("identifier",
// "end of query", ...).
func (k Kind) String() string {
	if int(k) < len(names) && names[k] != "" {
		return names[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// IsKeyword reports whether k is a keyword.
func (k Kind) IsKeyword() bool { return k > KeywordFirst && k < KeywordLast }

// IsOperator reports whether k is an operator or punctuation token.
func (k Kind) IsOperator() bool { return k >= Eq && k <= RBrace }

// Describe is how an expected token of kind k is named in error messages:
// keywords bare (FROM), operators quoted (")"), other kinds by description.
func (k Kind) Describe() string {
	if k.IsOperator() {
		return `"` + k.String() + `"`
	}
	return k.String()
}

// caseInsensitive maps the upper-case spelling of each case-insensitive
// keyword to its kind.
var caseInsensitive = func() map[string]Kind {
	m := make(map[string]Kind)
	for k := KeywordFirst + 1; k < False; k++ {
		m[names[k]] = k
	}
	return m
}()

// Lookup returns the keyword kind of the identifier-shaped word w, or Ident.
// Keywords are case-insensitive except false, null, true, udf and undefined,
// which sql.g4 (K_FALSE : 'false'; ...) recognizes in lowercase only: "TRUE"
// is an identifier.
func Lookup(w string) Kind {
	switch w {
	case "false":
		return False
	case "null":
		return Null
	case "true":
		return True
	case "udf":
		return Udf
	case "undefined":
		return Undefined
	}
	if len(w) < 2 || len(w) > 8 {
		return Ident
	}
	if k, ok := caseInsensitive[strings.ToUpper(w)]; ok {
		return k
	}
	return Ident
}

// IsIdentifier reports whether s can stand where sql.g4's identifier rule is
// expected: a LEX_IDENTIFIER that is not a keyword, or one of the keywords
// ALL, FIRST and LAST, which the rule also admits.
func IsIdentifier(s string) bool {
	if !IsIdentShaped(s) {
		return false
	}
	switch Lookup(s) {
	case Ident, All, First, Last:
		return true
	}
	return false
}

// IsIdentShaped reports whether s matches [a-zA-Z_][a-zA-Z_0-9]*.
func IsIdentShaped(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !IsIdentByte(c) || (i == 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// IsIdentByte reports whether c may appear in an identifier.
func IsIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Token is one lexical token.
type Token struct {
	Kind Kind
	Pos  Pos
	// Text is the exact source text of the token.
	Text string
	// Value is the decoded value: the unescaped contents of a String, the
	// name without '@' of a Param; otherwise equal to Text.
	Value string
}

// ParseNumber returns the value of the text of a Number token: a decimal
// number, or a 0x hex integer. It fails if the text is malformed or its value
// is not a finite float64.
func ParseNumber(text string) (float64, error) {
	if len(text) > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		u, err := strconv.ParseUint(text[2:], 16, 64)
		if err != nil {
			return 0, err
		}
		return float64(u), nil
	}
	if text == "" || text[0] != '.' && (text[0] < '0' || text[0] > '9') {
		return 0, fmt.Errorf("invalid number %q", text)
	}
	return strconv.ParseFloat(text, 64)
}
