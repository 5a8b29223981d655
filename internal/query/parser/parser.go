package parser

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/query/scanner"
	"github.com/parsecdb/parsec/internal/query/token"
)

// ErrSyntax is the sentinel every error from Parse and ParseExpr wraps.
var ErrSyntax = scanner.ErrSyntax

// Error is the type of every error from Parse and ParseExpr: a message and
// the position it applies to. Its text reads
// "syntax error at line L, column C: <message>".
type Error = scanner.Error

// MaxDepth bounds the nesting of expressions and subqueries, so that a
// hostile query cannot exhaust the stack of the parser or of later stages
// that walk the tree recursively.
const MaxDepth = 256

// Parse parses a whole query (sql.g4: program). On failure it returns a nil
// query and an *Error for the first problem found.
func Parse(src string) (*ast.Query, error) {
	q, err := newParser(src).program()
	if err != nil {
		return nil, err
	}
	return q, nil
}

// ParseExpr parses a lone scalar expression (sql.g4: scalar_expression
// followed by EOF), for tests and for callers that hold expression text.
func ParseExpr(src string) (ast.Expr, error) {
	p := newParser(src)
	e, err := p.scalar(0)
	if err != nil {
		return nil, err
	}
	if p.tok().Kind != token.EOF {
		return nil, p.unexpected("end of expression")
	}
	return e, nil
}

// parser is a recursive-descent parser over the whole token slice, which
// gives it any lookahead it needs. Each method returns the first error it
// meets; nothing is recovered.
//
// The text is scanned up front. A lexical error ends the token slice with
// an Illegal token; the error is reported only if the parser gets that far
// (see unexpected), so the first problem in the text is the one reported.
type parser struct {
	toks   []token.Token
	lexErr error // the error of the final Illegal token, if any
	i      int   // index of the current token
	depth  int
}

func newParser(src string) *parser {
	toks, err := scanner.Tokenize(src)
	p := &parser{toks: toks}
	if err != nil {
		p.lexErr = err
		p.toks = append(p.toks, token.Token{Kind: token.Illegal, Pos: err.(*Error).Pos})
	}
	return p
}

// tok is the current token.
func (p *parser) tok() token.Token { return p.toks[p.i] }

// peek is the token n places after the current one (EOF past the end).
func (p *parser) peek(n int) token.Token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

// next consumes and returns the current token.
func (p *parser) next() token.Token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

// got consumes the current token if it has kind k.
func (p *parser) got(k token.Kind) bool {
	if p.tok().Kind == k {
		p.next()
		return true
	}
	return false
}

// expect consumes a token of kind k or fails.
func (p *parser) expect(k token.Kind) (token.Token, error) {
	if p.tok().Kind != k {
		return token.Token{}, p.unexpected(k.Describe())
	}
	return p.next(), nil
}

// unexpected is the error "expected <want>, found <current token>", or the
// lexical error that ended the text if the current token is where it
// happened.
func (p *parser) unexpected(want string) error {
	t := p.tok()
	if t.Kind == token.Illegal {
		return p.lexErr
	}
	return &Error{Pos: t.Pos, Msg: fmt.Sprintf("expected %s, found %s", want, describe(t))}
}

// describe names a token found where it does not belong: "end of query",
// "string" and the literal as written, or the source text quoted; long
// texts are shortened.
func describe(t token.Token) string {
	if t.Kind == token.EOF {
		return "end of query"
	}
	text := t.Text
	if len(text) > 40 {
		cut := 37
		for cut > 0 && text[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		text = text[:cut] + "..."
	}
	if t.Kind == token.String {
		return "string " + text
	}
	return strconv.Quote(text)
}

// enter counts one level of nesting; leave undoes it.
func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return &Error{Pos: p.tok().Pos, Msg: fmt.Sprintf("query nested too deeply (more than %d levels)", MaxDepth)}
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// isIdent reports whether k can start sql.g4's identifier rule:
// LEX_IDENTIFIER, K_ALL, K_FIRST or K_LAST.
func isIdent(k token.Kind) bool {
	return k == token.Ident || k == token.All || k == token.First || k == token.Last
}

// ident parses identifier.
func (p *parser) ident(what string) (token.Token, error) {
	if !isIdent(p.tok().Kind) {
		return token.Token{}, p.unexpected(what)
	}
	return p.next(), nil
}

// propertyName parses the identifier after '.' in a path. A keyword there
// (c.value, c.order) is a common mistake, so the error says how to write it.
func (p *parser) propertyName() (token.Token, error) {
	if t := p.tok(); t.Kind.IsKeyword() && !isIdent(t.Kind) {
		return token.Token{}, &Error{Pos: t.Pos, Msg: fmt.Sprintf(
			`expected property name after ".", found keyword %q (write [%q] instead)`, t.Text, t.Text)}
	}
	return p.ident(`property name after "."`)
}

// program: sql_query EOF
func (p *parser) program() (*ast.Query, error) {
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	if p.tok().Kind != token.EOF {
		return nil, p.afterQuery(q, "end of query")
	}
	return q, nil
}

// afterQuery is the error for a token that follows a complete query: it
// lists the clauses that could still come, then the terminator.
func (p *parser) afterQuery(q *ast.Query, end string) error {
	var want []string
	later := q.Offset != nil
	if !later {
		want = append(want, "OFFSET")
	}
	later = later || q.OrderBy != nil
	if !later {
		want = append(want, "ORDER BY")
	}
	later = later || q.GroupBy != nil
	if !later {
		want = append(want, "GROUP BY")
	}
	later = later || q.Where != nil
	if !later {
		want = append(want, "WHERE")
	}
	later = later || q.From != nil
	if !later {
		want = append(want, "FROM")
	}
	for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
		want[i], want[j] = want[j], want[i]
	}
	want = append(want, end)
	return p.unexpected(oneOf(want))
}

// oneOf joins alternatives: "a", "a or b", "a, b or c".
func oneOf(alts []string) string {
	if len(alts) == 1 {
		return alts[0]
	}
	return strings.Join(alts[:len(alts)-1], ", ") + " or " + alts[len(alts)-1]
}

// query: sql_query : select_clause from_clause? where_clause?
// group_by_clause? order_by_clause? offset_limit_clause?
func (p *parser) query() (*ast.Query, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	q := &ast.Query{}
	var err error
	if q.Select, err = p.selectClause(); err != nil {
		return nil, err
	}
	if p.tok().Kind == token.From {
		if q.From, err = p.fromClause(); err != nil {
			return nil, err
		}
	}
	if p.got(token.Where) { // where_clause : K_WHERE scalar_expression
		if q.Where, err = p.scalar(0); err != nil {
			return nil, err
		}
	}
	if p.got(token.Group) { // group_by_clause : K_GROUP K_BY scalar_expression_list
		if _, err = p.expect(token.By); err != nil {
			return nil, err
		}
		if q.GroupBy, err = p.exprList(); err != nil {
			return nil, err
		}
	}
	if p.tok().Kind == token.Order {
		if q.OrderBy, err = p.orderByClause(); err != nil {
			return nil, err
		}
	}
	if p.got(token.Offset) { // offset_limit_clause : K_OFFSET offset_count K_LIMIT limit_count
		if q.Offset, err = p.count("OFFSET"); err != nil {
			return nil, err
		}
		if _, err = p.expect(token.Limit); err != nil {
			return nil, err
		}
		if q.Limit, err = p.count("LIMIT"); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// count parses top_spec's, offset_count's and limit_count's operand:
// NUMERIC_LITERAL | PARAMETER.
func (p *parser) count(after string) (ast.Expr, error) {
	t := p.tok()
	switch t.Kind {
	case token.Number:
		p.next()
		return &ast.NumberLit{At: t.Pos, Text: t.Text}, nil
	case token.Param:
		p.next()
		return &ast.Param{At: t.Pos, Name: t.Value}, nil
	}
	return nil, p.unexpected("number or parameter after " + after)
}

// selectClause parses
//
//	select_clause : K_SELECT K_DISTINCT? top_spec? selection
//	top_spec : K_TOP (NUMERIC_LITERAL | PARAMETER)
//	selection : select_star_spec | select_value_spec | select_list_spec
//	select_star_spec : '*'
//	select_value_spec : K_VALUE scalar_expression
//	select_list_spec : select_item ( ',' select_item )*
func (p *parser) selectClause() (*ast.Select, error) {
	t, err := p.expect(token.Select)
	if err != nil {
		return nil, err
	}
	s := &ast.Select{At: t.Pos}
	s.Distinct = p.got(token.Distinct)
	if p.got(token.Top) {
		if s.Top, err = p.count("TOP"); err != nil {
			return nil, err
		}
	}
	switch {
	case p.got(token.Star):
		s.Kind = ast.SelectStar
	case p.got(token.Value):
		s.Kind = ast.SelectValue
		if s.Value, err = p.scalar(0); err != nil {
			return nil, err
		}
	default:
		if !startsExpr(p.tok().Kind) {
			return nil, p.unexpected(`"*", VALUE or an expression`)
		}
		s.Kind = ast.SelectList
		for {
			it, err := p.selectItem()
			if err != nil {
				return nil, err
			}
			s.Items = append(s.Items, it)
			if !p.got(token.Comma) {
				break
			}
		}
	}
	return s, nil
}

// selectItem: select_item : scalar_expression (K_AS identifier)?
func (p *parser) selectItem() (*ast.SelectItem, error) {
	x, err := p.scalar(0)
	if err != nil {
		return nil, err
	}
	it := &ast.SelectItem{X: x}
	if p.got(token.As) {
		t, err := p.ident("alias after AS")
		if err != nil {
			return nil, err
		}
		it.Alias, it.AliasPos = t.Text, t.Pos
	}
	return it, nil
}

// fromClause parses
//
//	from_clause : K_FROM collection_expression
//	collection_expression : ... | collection_expression K_JOIN collection_expression
//
// The JOIN alternative is left-recursive and its right operand binds
// tighter, so a FROM clause is one source followed by JOIN source, ...
func (p *parser) fromClause() (*ast.From, error) {
	t := p.next() // FROM
	f := &ast.From{At: t.Pos}
	var err error
	if f.Source, err = p.source(); err != nil {
		return nil, err
	}
	for p.got(token.Join) {
		s, err := p.source()
		if err != nil {
			return nil, err
		}
		f.Joins = append(f.Joins, s)
	}
	return f, nil
}

// source parses one collection_expression without JOIN:
//
//	collection (K_AS? identifier)?     #AliasedCollectionExpression
//	identifier K_IN collection         #ArrayIteratorCollectionExpression
func (p *parser) source() (*ast.Source, error) {
	t := p.tok()
	s := &ast.Source{At: t.Pos}
	var err error
	if isIdent(t.Kind) && p.peek(1).Kind == token.In {
		p.next()
		p.next()
		s.Iter, s.Alias = true, t.Text
		if s.Coll, err = p.collection(); err != nil {
			return nil, err
		}
		return s, nil
	}
	if s.Coll, err = p.collection(); err != nil {
		return nil, err
	}
	if p.got(token.As) {
		a, err := p.ident("alias after AS")
		if err != nil {
			return nil, err
		}
		s.Alias = a.Text
	} else if isIdent(p.tok().Kind) {
		s.Alias = p.next().Text
	}
	return s, nil
}

// collection parses
//
//	collection : identifier path_expression?  #InputPathCollection
//	           | '(' sql_query ')'            #SubqueryCollection
//	path_expression : path_expression '.' identifier
//	                | path_expression '[' NUMERIC_LITERAL ']'
//	                | path_expression '[' STRING_LITERAL ']'
//	                | /* epsilon */
func (p *parser) collection() (*ast.Collection, error) {
	t := p.tok()
	c := &ast.Collection{At: t.Pos}
	if t.Kind == token.LParen {
		q, err := p.parenQuery()
		if err != nil {
			return nil, err
		}
		c.Query = q
		return c, nil
	}
	if !isIdent(t.Kind) {
		return nil, p.unexpected("collection name or subquery")
	}
	p.next()
	c.Root = t.Text
	for {
		t := p.tok()
		switch t.Kind {
		case token.Dot:
			p.next()
			n, err := p.propertyName()
			if err != nil {
				return nil, err
			}
			c.Path = append(c.Path, &ast.PathSeg{At: t.Pos, Kind: ast.SegName, Text: n.Text})
		case token.LBrack:
			p.next()
			seg := &ast.PathSeg{At: t.Pos}
			switch k := p.tok(); k.Kind {
			case token.Number:
				seg.Kind, seg.Text = ast.SegIndex, k.Text
			case token.String:
				seg.Kind, seg.Text = ast.SegKey, k.Value
			default:
				return nil, p.unexpected("number or string in a FROM path")
			}
			p.next()
			if _, err := p.expect(token.RBrack); err != nil {
				return nil, err
			}
			c.Path = append(c.Path, seg)
		default:
			return c, nil
		}
	}
}

// orderByClause parses
//
//	order_by_clause : K_ORDER K_BY order_by_items
//	                | K_ORDER K_BY K_RANK score_expression_order_by_items
//	order_by_item : scalar_expression sort_order?
//	score_expression_order_by_item : function_call_scalar_expression sort_order?
//	sort_order : K_ASC | K_DESC
func (p *parser) orderByClause() (*ast.OrderBy, error) {
	t := p.next() // ORDER
	if _, err := p.expect(token.By); err != nil {
		return nil, err
	}
	o := &ast.OrderBy{At: t.Pos, Rank: p.got(token.Rank)}
	for {
		var x ast.Expr
		var err error
		if o.Rank {
			x, err = p.rankCall()
		} else {
			x, err = p.scalar(0)
		}
		if err != nil {
			return nil, err
		}
		it := &ast.OrderItem{X: x}
		if p.got(token.Asc) {
			it.Dir = ast.Asc
		} else if p.got(token.Desc) {
			it.Dir = ast.Desc
		}
		o.Items = append(o.Items, it)
		if !p.got(token.Comma) {
			return o, nil
		}
	}
}

// rankCall parses the function_call_scalar_expression of an ORDER BY RANK
// item.
func (p *parser) rankCall() (ast.Expr, error) {
	t := p.tok()
	switch {
	case t.Kind == token.Udf,
		(isIdent(t.Kind) || t.Kind == token.Left || t.Kind == token.Right) && p.peek(1).Kind == token.LParen:
		return p.call()
	}
	return nil, p.unexpected("function call after ORDER BY RANK")
}

// exprList: scalar_expression_list : scalar_expression (',' scalar_expression)*
func (p *parser) exprList() ([]ast.Expr, error) {
	var list []ast.Expr
	for {
		e, err := p.scalar(0)
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.got(token.Comma) {
			return list, nil
		}
	}
}

// scalar parses scalar_expression, keeping only operators of precedence
// min or above:
//
//	scalar_expression
//	    : scalar_expression '?' scalar_expression ':' scalar_expression
//	    | scalar_expression '??' scalar_expression
//	    | logical_scalar_expression
//	    | binary_scalar_expression K_NOT? K_BETWEEN ... (handled in predicate)
//
// In ANTLR's left-recursive rules an earlier alternative binds tighter:
// '?' binds tighter than '??'. Both would be left-associative as written;
// '?' is parsed right-associatively, as C#, JavaScript and the Cosmos DB
// documentation's nested example (a ? x : b ? y : z) require.
func (p *parser) scalar(min int) (ast.Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.or()
	if err != nil {
		return nil, err
	}
	for {
		switch t := p.tok(); {
		case t.Kind == token.Question && ast.PrecConditional >= min:
			p.next()
			then, err := p.scalar(0)
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(token.Colon); err != nil {
				return nil, err
			}
			els, err := p.scalar(ast.PrecConditional)
			if err != nil {
				return nil, err
			}
			x = &ast.Conditional{Cond: x, Then: then, Else: els}
		case t.Kind == token.Coalesce && ast.PrecCoalesce >= min:
			p.next()
			r, err := p.scalar(ast.PrecCoalesce + 1)
			if err != nil {
				return nil, err
			}
			x = &ast.Binary{Op: ast.Coalesce, L: x, R: r, OpPos: t.Pos}
		default:
			return x, nil
		}
	}
}

// or and and parse logical_scalar_expression:
//
//	logical_scalar_expression
//	    : binary_scalar_expression | in_scalar_expression | like_scalar_expression
//	    | logical_scalar_expression K_AND logical_scalar_expression
//	    | logical_scalar_expression K_OR logical_scalar_expression
//
// AND is listed first, so it binds tighter; both are left-associative.
func (p *parser) or() (ast.Expr, error) { return p.logical(token.Or, ast.Or, p.and) }

func (p *parser) and() (ast.Expr, error) { return p.logical(token.And, ast.And, p.predicate) }

// logical parses operands joined by one left-associative operator.
func (p *parser) logical(kind token.Kind, op ast.BinaryOp, operand func() (ast.Expr, error)) (ast.Expr, error) {
	x, err := operand()
	if err != nil {
		return nil, err
	}
	for p.tok().Kind == kind {
		t := p.next()
		r, err := operand()
		if err != nil {
			return nil, err
		}
		x = &ast.Binary{Op: op, L: x, R: r, OpPos: t.Pos}
	}
	return x, nil
}

// predicate parses an operand of AND/OR:
//
//	in_scalar_expression : binary_scalar_expression K_NOT? K_IN '(' scalar_expression_list ')'
//	like_scalar_expression : binary_scalar_expression K_NOT? K_LIKE binary_scalar_expression escape_expression?
//	escape_expression : K_ESCAPE STRING_LITERAL
//	binary_scalar_expression K_NOT? K_BETWEEN binary_scalar_expression K_AND binary_scalar_expression
//
// sql.g4 puts BETWEEN in scalar_expression, where it cannot be an operand
// of AND or OR ("a BETWEEN 1 AND 2 AND b" would not parse); it is accepted
// here, beside IN and LIKE, which parses everything sql.g4 does to the same
// tree and also the AND/OR combinations the service accepts.
func (p *parser) predicate() (ast.Expr, error) {
	x, err := p.binary(ast.PrecConcat)
	if err != nil {
		return nil, err
	}
	not := false
	if p.tok().Kind == token.Not {
		switch p.peek(1).Kind {
		case token.In, token.Like, token.Between:
			p.next()
			not = true
		default:
			return x, nil
		}
	}
	switch p.tok().Kind {
	case token.In:
		p.next()
		if _, err := p.expect(token.LParen); err != nil {
			return nil, err
		}
		list, err := p.exprList()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(token.RParen); err != nil {
			return nil, err
		}
		return &ast.In{X: x, Not: not, List: list}, nil
	case token.Like:
		p.next()
		pat, err := p.binary(ast.PrecConcat)
		if err != nil {
			return nil, err
		}
		l := &ast.Like{X: x, Not: not, Pattern: pat}
		if p.got(token.Escape) {
			t, err := p.expect(token.String)
			if err != nil {
				return nil, err
			}
			l.Escape = &ast.StringLit{At: t.Pos, Value: t.Value}
		}
		return l, nil
	case token.Between:
		p.next()
		lo, err := p.binary(ast.PrecConcat)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(token.And); err != nil {
			return nil, err
		}
		hi, err := p.binary(ast.PrecConcat)
		if err != nil {
			return nil, err
		}
		return &ast.Between{X: x, Not: not, Lo: lo, Hi: hi}, nil
	}
	return x, nil
}

// binaryOps maps the tokens of binary_scalar_expression's operators to
// their ast operators.
var binaryOps = map[token.Kind]ast.BinaryOp{
	token.Star: ast.Mul, token.Slash: ast.Div, token.Percent: ast.Mod,
	token.Plus: ast.Add, token.Minus: ast.Sub,
	token.Shl: ast.Shl, token.Shr: ast.Shr, token.ShrZero: ast.ShrZero,
	token.Lt: ast.Lt, token.Gt: ast.Gt, token.Le: ast.Le, token.Ge: ast.Ge,
	token.Eq: ast.Eq, token.Ne: ast.Ne, token.LtGt: ast.Ne,
	token.BitAnd: ast.BitAnd, token.BitXor: ast.BitXor, token.BitOr: ast.BitOr,
	token.Concat: ast.Concat,
}

// binary parses binary_scalar_expression by precedence climbing, keeping
// operators of precedence min or above:
//
//	binary_scalar_expression
//	    : unary_scalar_expression
//	    | binary_scalar_expression multiplicative_operator binary_scalar_expression
//	    | ... additive_operator ... | ... relational_operator ...
//	    | ... equality_operator ... | ... bitwise_and_operator ...
//	    | ... bitwise_exclusive_or_operator ... | ... bitwise_inclusive_or_operator ...
//	    | ... string_concat_operator ...
//
// The alternatives bind tighter the earlier they are listed, all
// left-associative; ast.Prec holds the resulting table.
func (p *parser) binary(min int) (ast.Expr, error) {
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.tok()
		op, ok := binaryOps[t.Kind]
		if !ok || op.Prec() < min {
			return x, nil
		}
		p.next()
		r, err := p.binary(op.Prec() + 1)
		if err != nil {
			return nil, err
		}
		x = &ast.Binary{Op: op, L: x, R: r, OpPos: t.Pos}
	}
}

// unary parses
//
//	unary_scalar_expression : primary_expression | unary_operator unary_scalar_expression
//	unary_operator : '-' | '+' | '~' | K_NOT
//
// NOT is a unary operator like '-': it binds tighter than any binary
// operator, so NOT a = b is (NOT a) = b.
func (p *parser) unary() (ast.Expr, error) {
	t := p.tok()
	var op ast.UnaryOp
	switch t.Kind {
	case token.Minus:
		op = ast.Neg
	case token.Plus:
		op = ast.Plus
	case token.Tilde:
		op = ast.BitNot
	case token.Not:
		op = ast.Not
	default:
		return p.primary()
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	x, err := p.unary()
	if err != nil {
		return nil, err
	}
	return &ast.Unary{At: t.Pos, Op: op, X: x}, nil
}

// startsExpr reports whether a token of kind k can begin a scalar
// expression.
func startsExpr(k token.Kind) bool {
	switch k {
	case token.Ident, token.All, token.First, token.Last, token.Param,
		token.String, token.Number, token.True, token.False, token.Null, token.Undefined,
		token.LBrack, token.LBrace, token.LParen, token.Exists, token.Array,
		token.Udf, token.Left, token.Right,
		token.Minus, token.Plus, token.Tilde, token.Not:
		return true
	}
	return false
}

// primary parses primary_expression:
//
//	primary_expression
//	    : identifier                                #PropertyRefScalarExpressionBase
//	    | PARAMETER                                 #ParameterRefScalarExpression
//	    | literal                                   #LiteralScalarExpression
//	    | '[' scalar_expression_list? ']'           #ArrayCreateScalarExpression
//	    | '{' object_property_list? '}'             #ObjectCreateScalarExpression
//	    | '(' scalar_expression ')'                 #ParenthesizedScalarExperession
//	    | '(' sql_query ')'                         #SubqueryScalarExpression
//	    | primary_expression '.' identifier         #PropertyRefScalarExpressionRecursive
//	    | primary_expression '[' scalar_expression ']'  #MemberIndexerScalarExpression
//	    | K_EXISTS '(' sql_query ')' | K_ARRAY '(' sql_query ')'
//	    | K_ALL '(' sql_query ')' | K_FIRST '(' sql_query ')' | K_LAST '(' sql_query ')'
//	    | function_call_scalar_expression
//	literal : STRING_LITERAL | NUMERIC_LITERAL | K_TRUE | K_FALSE | K_NULL | K_UNDEFINED
func (p *parser) primary() (ast.Expr, error) {
	x, err := p.operand()
	if err != nil {
		return nil, err
	}
	for {
		switch t := p.tok(); t.Kind {
		case token.Dot:
			p.next()
			n, err := p.propertyName()
			if err != nil {
				return nil, err
			}
			x = &ast.Dot{X: x, Name: n.Text, NamePos: n.Pos}
		case token.LBrack:
			p.next()
			i, err := p.scalar(0)
			if err != nil {
				return nil, err
			}
			if _, err := p.expect(token.RBrack); err != nil {
				return nil, err
			}
			x = &ast.Index{X: x, Index: i, Lbrack: t.Pos}
		default:
			return x, nil
		}
	}
}

var subqueryKinds = map[token.Kind]ast.SubqueryKind{
	token.Exists: ast.Exists, token.Array: ast.Array,
	token.All: ast.All, token.First: ast.First, token.Last: ast.Last,
}

// operand parses the non-recursive alternatives of primary_expression.
func (p *parser) operand() (ast.Expr, error) {
	t := p.tok()
	switch t.Kind {
	case token.Ident, token.All, token.First, token.Last:
		if p.peek(1).Kind == token.LParen {
			if t.Kind != token.Ident && p.peek(2).Kind == token.Select {
				return p.subquery(subqueryKinds[t.Kind])
			}
			return p.call()
		}
		p.next()
		return &ast.Ident{At: t.Pos, Name: t.Text}, nil
	case token.Udf, token.Left, token.Right:
		return p.call()
	case token.Exists, token.Array:
		return p.subquery(subqueryKinds[t.Kind])
	case token.Param:
		p.next()
		return &ast.Param{At: t.Pos, Name: t.Value}, nil
	case token.String:
		p.next()
		return &ast.StringLit{At: t.Pos, Value: t.Value}, nil
	case token.Number:
		p.next()
		return &ast.NumberLit{At: t.Pos, Text: t.Text}, nil
	case token.True, token.False:
		p.next()
		return &ast.BoolLit{At: t.Pos, Value: t.Kind == token.True}, nil
	case token.Null:
		p.next()
		return &ast.NullLit{At: t.Pos}, nil
	case token.Undefined:
		p.next()
		return &ast.UndefinedLit{At: t.Pos}, nil
	case token.LBrack:
		p.next()
		a := &ast.ArrayCreate{At: t.Pos}
		if !p.got(token.RBrack) {
			var err error
			if a.Elems, err = p.exprList(); err != nil {
				return nil, err
			}
			if _, err := p.expect(token.RBrack); err != nil {
				return nil, err
			}
		}
		return a, nil
	case token.LBrace:
		return p.object()
	case token.LParen:
		if p.peek(1).Kind == token.Select {
			return p.subquery(ast.Scalar)
		}
		p.next()
		x, err := p.scalar(0)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(token.RParen); err != nil {
			return nil, err
		}
		return x, nil
	}
	return nil, p.unexpected("an expression")
}

// subquery parses [KEYWORD] '(' sql_query ')', the current token being the
// keyword or, for kind Scalar, the '('.
func (p *parser) subquery(kind ast.SubqueryKind) (ast.Expr, error) {
	t := p.tok()
	if kind != ast.Scalar {
		p.next()
	}
	q, err := p.parenQuery()
	if err != nil {
		return nil, err
	}
	return &ast.Subquery{At: t.Pos, Kind: kind, Query: q}, nil
}

// parenQuery parses a parenthesized subquery: '(' select ')'.
func (p *parser) parenQuery() (*ast.Query, error) {
	if _, err := p.expect(token.LParen); err != nil {
		return nil, err
	}
	if p.tok().Kind != token.Select {
		return nil, p.unexpected("SELECT (a subquery)")
	}
	q, err := p.query()
	if err != nil {
		return nil, err
	}
	if p.tok().Kind != token.RParen {
		return nil, p.afterQuery(q, `")"`)
	}
	p.next()
	return q, nil
}

// call parses
//
//	function_call_scalar_expression
//	    : (K_UDF '.')? identifier '(' scalar_expression_list? ')'
//	    | K_LEFT '(' scalar_expression_list? ')'
//	    | K_RIGHT '(' scalar_expression_list? ')'
func (p *parser) call() (ast.Expr, error) {
	t := p.next()
	c := &ast.Call{At: t.Pos, Name: t.Text}
	if t.Kind == token.Udf {
		if _, err := p.expect(token.Dot); err != nil {
			return nil, err
		}
		n, err := p.ident("function name after udf.")
		if err != nil {
			return nil, err
		}
		c.UDF, c.Name = true, n.Text
	}
	if _, err := p.expect(token.LParen); err != nil {
		return nil, err
	}
	if !p.got(token.RParen) {
		var err error
		if c.Args, err = p.exprList(); err != nil {
			return nil, err
		}
		if _, err := p.expect(token.RParen); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// object parses
//
//	'{' object_property_list? '}'
//	object_property_list : object_property (',' object_property)*
//	object_property : STRING_LITERAL ':' scalar_expression
//
// A property name may also be a bare identifier, as the Cosmos DB
// documentation's <create_object_expression> allows ({name: expr}).
func (p *parser) object() (ast.Expr, error) {
	t := p.next() // {
	o := &ast.ObjectCreate{At: t.Pos}
	if p.got(token.RBrace) {
		return o, nil
	}
	for {
		k := p.tok()
		if k.Kind != token.String && !isIdent(k.Kind) {
			return nil, p.unexpected("property name (a string or an identifier)")
		}
		p.next()
		if _, err := p.expect(token.Colon); err != nil {
			return nil, err
		}
		x, err := p.scalar(0)
		if err != nil {
			return nil, err
		}
		o.Props = append(o.Props, &ast.Prop{At: k.Pos, Key: k.Value, X: x})
		if !p.got(token.Comma) {
			break
		}
	}
	if _, err := p.expect(token.RBrace); err != nil {
		return nil, err
	}
	return o, nil
}
