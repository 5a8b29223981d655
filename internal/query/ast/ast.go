// Package ast declares the syntax tree of the Cosmos DB NoSQL query language:
// a Query and its clauses, and the scalar expressions (Expr) they hold. It
// is the third stage of the front end (token → scanner → ast → parser); see
// package parser for the manual.
//
// Nodes are immutable: the parser builds a tree once and nothing assigns to
// a node's fields afterwards, so trees and subtrees may be shared freely
// between goroutines and between trees. A later stage that rewrites a tree
// builds new nodes (sharing the unchanged subtrees) instead of editing.
//
// Every node has a String method that prints canonical query text: keywords
// in upper case, strings double-quoted, one space around binary operators,
// and parentheses only where precedence requires them. Parsing that text
// gives a tree Equal to the original. Tree prints the compact S-expression
// form used by the golden tests.
package ast

import "github.com/parsecdb/parsec/internal/query/token"

// Node is any syntax tree node.
type Node interface {
	// Pos is the position of the node's first token.
	Pos() token.Pos
	// String returns canonical query text for the node.
	String() string
}

// Expr is a scalar expression (sql.g4: scalar_expression and below).
type Expr interface {
	Node
	exprNode()
}

// Query is a whole query or subquery (sql.g4: sql_query). Select is always
// set; the other clauses are nil when absent. Offset and Limit are both nil
// or both set, each a *NumberLit or a *Param.
type Query struct {
	Select  *Select
	From    *From
	Where   Expr
	GroupBy []Expr
	OrderBy *OrderBy
	Offset  Expr
	Limit   Expr
}

// SelectKind tells the three forms of the selection apart.
type SelectKind uint8

const (
	// SelectStar is SELECT *.
	SelectStar SelectKind = iota
	// SelectList is SELECT item, item, ...
	SelectList
	// SelectValue is SELECT VALUE expr.
	SelectValue
)

// Select is the SELECT clause (sql.g4: select_clause). Top is nil, a
// *NumberLit or a *Param. Items is set only for SelectList and Value only for
// SelectValue.
type Select struct {
	At       token.Pos
	Distinct bool
	Top      Expr
	Kind     SelectKind
	Items    []*SelectItem
	Value    Expr
}

// SelectItem is one projection of a select list: X [AS Alias]. Alias is ""
// when absent.
type SelectItem struct {
	X        Expr
	Alias    string
	AliasPos token.Pos
}

// From is the FROM clause: the first source and the sources joined to it,
// in order (sql.g4: from_clause, collection_expression; JOIN is
// left-associative, so a list is the whole story).
type From struct {
	At     token.Pos
	Source *Source
	Joins  []*Source
}

// Source is one input of a FROM clause (sql.g4: collection_expression
// without JOIN). Iter false is "Coll [AS Alias]" with Alias "" when absent
// (AliasedCollectionExpression); Iter true is "Alias IN Coll"
// (ArrayIteratorCollectionExpression).
type Source struct {
	At    token.Pos
	Iter  bool
	Alias string
	Coll  *Collection
}

// Collection is what a Source reads (sql.g4: collection): either a subquery
// (Query set) or a root name with a path (Root set, Path possibly empty).
type Collection struct {
	At    token.Pos
	Root  string
	Path  []*PathSeg
	Query *Query
}

// SegKind tells the three kinds of path segment apart.
type SegKind uint8

const (
	// SegName is .identifier; Text is the identifier.
	SegName SegKind = iota
	// SegIndex is [NUMERIC_LITERAL]; Text is the number as written.
	SegIndex
	// SegKey is [STRING_LITERAL]; Text is the decoded string.
	SegKey
)

// PathSeg is one step of a collection path (sql.g4: path_expression).
type PathSeg struct {
	At   token.Pos
	Kind SegKind
	Text string
}

// OrderBy is the ORDER BY clause (sql.g4: order_by_clause). With Rank
// (ORDER BY RANK) every item's X is a *Call.
type OrderBy struct {
	At    token.Pos
	Rank  bool
	Items []*OrderItem
}

// Direction is the sort order of an ORDER BY item.
type Direction uint8

const (
	// DirNone means no ASC or DESC was written (ascending).
	DirNone Direction = iota
	// Asc is ASC.
	Asc
	// Desc is DESC.
	Desc
)

// OrderItem is one ORDER BY key (sql.g4: order_by_item).
type OrderItem struct {
	X   Expr
	Dir Direction
}

// Ident is a bare name: an alias or the root of a property path (sql.g4:
// PropertyRefScalarExpressionBase).
type Ident struct {
	At   token.Pos
	Name string
}

// Param is a parameter reference @Name (Name without the '@').
type Param struct {
	At   token.Pos
	Name string
}

// StringLit is a string literal; Value is the decoded string.
type StringLit struct {
	At    token.Pos
	Value string
}

// NumberLit is a non-negative number literal, kept as written ("1.50",
// "0x1F", "1e3"); a minus sign is a *Unary. Use Float for the value.
type NumberLit struct {
	At   token.Pos
	Text string
}

// Float returns the value of the literal. It panics if Text is not a valid
// number literal, which the parser never produces.
func (n *NumberLit) Float() float64 {
	v, err := token.ParseNumber(n.Text)
	if err != nil {
		panic("BUG: ast: bad number literal " + n.Text + ": " + err.Error())
	}
	return v
}

// BoolLit is true or false.
type BoolLit struct {
	At    token.Pos
	Value bool
}

// NullLit is null.
type NullLit struct {
	At token.Pos
}

// UndefinedLit is undefined.
type UndefinedLit struct {
	At token.Pos
}

// ArrayCreate is an array constructor [e1, e2, ...] (sql.g4:
// ArrayCreateScalarExpression).
type ArrayCreate struct {
	At    token.Pos
	Elems []Expr
}

// ObjectCreate is an object constructor {"k": e, ...} (sql.g4:
// ObjectCreateScalarExpression).
type ObjectCreate struct {
	At    token.Pos
	Props []*Prop
}

// Prop is one property of an ObjectCreate. Key is the decoded name (written
// as a string literal, or as a bare identifier: an extension).
type Prop struct {
	At  token.Pos
	Key string
	X   Expr
}

// Dot is a property access X.Name (sql.g4:
// PropertyRefScalarExpressionRecursive).
type Dot struct {
	X       Expr
	Name    string
	NamePos token.Pos
}

// Index is a member indexer X[Index] (sql.g4: MemberIndexerScalarExpression):
// c["key"], c.arr[0], c[@p].
type Index struct {
	X      Expr
	Index  Expr
	Lbrack token.Pos
}

// Call is a function call Name(Args...) or, with UDF, udf.Name(Args...)
// (sql.g4: function_call_scalar_expression). Name is as written; built-in
// function names are resolved case-insensitively by later stages, not here.
// Aggregates are calls too.
type Call struct {
	At   token.Pos
	UDF  bool
	Name string
	Args []Expr
}

// UnaryOp is a prefix operator.
type UnaryOp uint8

// Unary operators (sql.g4: unary_operator).
const (
	Neg    UnaryOp = iota // -
	Plus                  // +
	BitNot                // ~
	Not                   // NOT
)

var unaryNames = [...]string{Neg: "-", Plus: "+", BitNot: "~", Not: "NOT"}

// String returns the operator's spelling.
func (op UnaryOp) String() string { return unaryNames[op] }

// Unary is a prefix operation Op X.
type Unary struct {
	At token.Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp uint8

// Binary operators, grouped by precedence from tightest to loosest.
const (
	Mul BinaryOp = iota // *
	Div                 // /
	Mod                 // %

	Add // +
	Sub // -

	Shl     // <<  (extension)
	Shr     // >>  (extension)
	ShrZero // >>> (extension)

	Lt // <
	Gt // >
	Le // <=
	Ge // >=

	Eq // =
	Ne // != (also written <>)

	BitAnd // &
	BitXor // ^
	BitOr  // |
	Concat // ||

	And // AND
	Or  // OR

	Coalesce // ??
)

var binaryNames = [...]string{
	Mul: "*", Div: "/", Mod: "%", Add: "+", Sub: "-",
	Shl: "<<", Shr: ">>", ShrZero: ">>>",
	Lt: "<", Gt: ">", Le: "<=", Ge: ">=", Eq: "=", Ne: "!=",
	BitAnd: "&", BitXor: "^", BitOr: "|", Concat: "||",
	And: "AND", Or: "OR", Coalesce: "??",
}

// String returns the operator's canonical spelling.
func (op BinaryOp) String() string { return binaryNames[op] }

// Binary is an infix operation L Op R.
type Binary struct {
	Op    BinaryOp
	L, R  Expr
	OpPos token.Pos
}

// In is X [NOT] IN (List...) (sql.g4: in_scalar_expression). List is not
// empty.
type In struct {
	X    Expr
	Not  bool
	List []Expr
}

// Between is X [NOT] BETWEEN Lo AND Hi.
type Between struct {
	X      Expr
	Not    bool
	Lo, Hi Expr
}

// Like is X [NOT] LIKE Pattern [ESCAPE Escape] (sql.g4:
// like_scalar_expression). Escape is nil when absent.
type Like struct {
	X       Expr
	Not     bool
	Pattern Expr
	Escape  *StringLit
}

// Conditional is Cond ? Then : Else.
type Conditional struct {
	Cond, Then, Else Expr
}

// SubqueryKind tells the subquery expressions apart.
type SubqueryKind uint8

// Subquery kinds (sql.g4: SubqueryScalarExpression, ExistsScalarExpression,
// ArrayScalarExpression, AllScalarExpression, FirstScalarExpression,
// LastScalarExpression).
const (
	Scalar SubqueryKind = iota // (SELECT ...)
	Exists                     // EXISTS(SELECT ...)
	Array                      // ARRAY(SELECT ...)
	All                        // ALL(SELECT ...)
	First                      // FIRST(SELECT ...)
	Last                       // LAST(SELECT ...)
)

var subqueryNames = [...]string{Scalar: "", Exists: "EXISTS", Array: "ARRAY", All: "ALL", First: "FIRST", Last: "LAST"}

// String returns the keyword of the kind ("" for Scalar).
func (k SubqueryKind) String() string { return subqueryNames[k] }

// Subquery is a subquery used as an expression.
type Subquery struct {
	At    token.Pos
	Kind  SubqueryKind
	Query *Query
}

// Pos methods.

func (q *Query) Pos() token.Pos {
	if q.Select == nil {
		return token.Pos{}
	}
	return q.Select.At
}
func (n *Select) Pos() token.Pos       { return n.At }
func (n *SelectItem) Pos() token.Pos   { return n.X.Pos() }
func (n *From) Pos() token.Pos         { return n.At }
func (n *Source) Pos() token.Pos       { return n.At }
func (n *Collection) Pos() token.Pos   { return n.At }
func (n *PathSeg) Pos() token.Pos      { return n.At }
func (n *OrderBy) Pos() token.Pos      { return n.At }
func (n *OrderItem) Pos() token.Pos    { return n.X.Pos() }
func (n *Prop) Pos() token.Pos         { return n.At }
func (n *Ident) Pos() token.Pos        { return n.At }
func (n *Param) Pos() token.Pos        { return n.At }
func (n *StringLit) Pos() token.Pos    { return n.At }
func (n *NumberLit) Pos() token.Pos    { return n.At }
func (n *BoolLit) Pos() token.Pos      { return n.At }
func (n *NullLit) Pos() token.Pos      { return n.At }
func (n *UndefinedLit) Pos() token.Pos { return n.At }
func (n *ArrayCreate) Pos() token.Pos  { return n.At }
func (n *ObjectCreate) Pos() token.Pos { return n.At }
func (n *Dot) Pos() token.Pos          { return n.X.Pos() }
func (n *Index) Pos() token.Pos        { return n.X.Pos() }
func (n *Call) Pos() token.Pos         { return n.At }
func (n *Unary) Pos() token.Pos        { return n.At }
func (n *Binary) Pos() token.Pos       { return n.L.Pos() }
func (n *In) Pos() token.Pos           { return n.X.Pos() }
func (n *Between) Pos() token.Pos      { return n.X.Pos() }
func (n *Like) Pos() token.Pos         { return n.X.Pos() }
func (n *Conditional) Pos() token.Pos  { return n.Cond.Pos() }
func (n *Subquery) Pos() token.Pos     { return n.At }

func (*Ident) exprNode()        {}
func (*Param) exprNode()        {}
func (*StringLit) exprNode()    {}
func (*NumberLit) exprNode()    {}
func (*BoolLit) exprNode()      {}
func (*NullLit) exprNode()      {}
func (*UndefinedLit) exprNode() {}
func (*ArrayCreate) exprNode()  {}
func (*ObjectCreate) exprNode() {}
func (*Dot) exprNode()          {}
func (*Index) exprNode()        {}
func (*Call) exprNode()         {}
func (*Unary) exprNode()        {}
func (*Binary) exprNode()       {}
func (*In) exprNode()           {}
func (*Between) exprNode()      {}
func (*Like) exprNode()         {}
func (*Conditional) exprNode()  {}
func (*Subquery) exprNode()     {}
