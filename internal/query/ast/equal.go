package ast

// Equal reports whether a and b are the same tree, ignoring positions.
// Number literals compare by their text ("1.0" and "1" differ) and strings
// by their decoded value ('a' and "a" are equal). Nil nodes are equal only
// to nil nodes.
func Equal(a, b Node) bool {
	if isNil(a) || isNil(b) {
		return isNil(a) && isNil(b)
	}
	switch a := a.(type) {
	case *Query:
		b, ok := b.(*Query)
		return ok && equalQuery(a, b)
	case *Select:
		b, ok := b.(*Select)
		return ok && equalSelect(a, b)
	case *SelectItem:
		b, ok := b.(*SelectItem)
		return ok && a.Alias == b.Alias && Equal(a.X, b.X)
	case *From:
		b, ok := b.(*From)
		return ok && equalFrom(a, b)
	case *Source:
		b, ok := b.(*Source)
		return ok && equalSource(a, b)
	case *Collection:
		b, ok := b.(*Collection)
		return ok && equalCollection(a, b)
	case *PathSeg:
		b, ok := b.(*PathSeg)
		return ok && a.Kind == b.Kind && a.Text == b.Text
	case *OrderBy:
		b, ok := b.(*OrderBy)
		return ok && equalOrderBy(a, b)
	case *OrderItem:
		b, ok := b.(*OrderItem)
		return ok && a.Dir == b.Dir && Equal(a.X, b.X)
	case *Prop:
		b, ok := b.(*Prop)
		return ok && a.Key == b.Key && Equal(a.X, b.X)
	case Expr:
		b, ok := b.(Expr)
		return ok && equalExpr(a, b)
	}
	panic("BUG: ast: unknown node type")
}

// isNil reports whether n is nil or a typed nil pointer.
func isNil(n Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *Query:
		return n == nil
	case *Select:
		return n == nil
	case *SelectItem:
		return n == nil
	case *From:
		return n == nil
	case *Source:
		return n == nil
	case *Collection:
		return n == nil
	case *PathSeg:
		return n == nil
	case *OrderBy:
		return n == nil
	case *OrderItem:
		return n == nil
	case *Prop:
		return n == nil
	case *StringLit:
		return n == nil
	}
	return false
}

func equalQuery(a, b *Query) bool {
	return Equal(a.Select, b.Select) &&
		Equal(a.From, b.From) &&
		equalOptExpr(a.Where, b.Where) &&
		(a.GroupBy == nil) == (b.GroupBy == nil) && equalExprs(a.GroupBy, b.GroupBy) &&
		Equal(a.OrderBy, b.OrderBy) &&
		equalOptExpr(a.Offset, b.Offset) &&
		equalOptExpr(a.Limit, b.Limit)
}

func equalSelect(a, b *Select) bool {
	if a.Distinct != b.Distinct || a.Kind != b.Kind || !equalOptExpr(a.Top, b.Top) ||
		!equalOptExpr(a.Value, b.Value) || len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		if !Equal(a.Items[i], b.Items[i]) {
			return false
		}
	}
	return true
}

func equalFrom(a, b *From) bool {
	if !Equal(a.Source, b.Source) || len(a.Joins) != len(b.Joins) {
		return false
	}
	for i := range a.Joins {
		if !Equal(a.Joins[i], b.Joins[i]) {
			return false
		}
	}
	return true
}

func equalSource(a, b *Source) bool {
	return a.Iter == b.Iter && a.Alias == b.Alias && Equal(a.Coll, b.Coll)
}

func equalCollection(a, b *Collection) bool {
	if a.Root != b.Root || !Equal(a.Query, b.Query) || len(a.Path) != len(b.Path) {
		return false
	}
	for i := range a.Path {
		if !Equal(a.Path[i], b.Path[i]) {
			return false
		}
	}
	return true
}

func equalOrderBy(a, b *OrderBy) bool {
	if a.Rank != b.Rank || len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		if !Equal(a.Items[i], b.Items[i]) {
			return false
		}
	}
	return true
}

// equalOptExpr compares two expressions either of which may be nil.
func equalOptExpr(a, b Expr) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return equalExpr(a, b)
}

func equalExprs(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalExpr(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalExpr(a, b Expr) bool {
	switch a := a.(type) {
	case *Ident:
		b, ok := b.(*Ident)
		return ok && a.Name == b.Name
	case *Param:
		b, ok := b.(*Param)
		return ok && a.Name == b.Name
	case *StringLit:
		b, ok := b.(*StringLit)
		return ok && (a == nil) == (b == nil) && (a == nil || a.Value == b.Value)
	case *NumberLit:
		b, ok := b.(*NumberLit)
		return ok && a.Text == b.Text
	case *BoolLit:
		b, ok := b.(*BoolLit)
		return ok && a.Value == b.Value
	case *NullLit:
		_, ok := b.(*NullLit)
		return ok
	case *UndefinedLit:
		_, ok := b.(*UndefinedLit)
		return ok
	case *ArrayCreate:
		b, ok := b.(*ArrayCreate)
		return ok && equalExprs(a.Elems, b.Elems)
	case *ObjectCreate:
		b, ok := b.(*ObjectCreate)
		if !ok || len(a.Props) != len(b.Props) {
			return false
		}
		for i := range a.Props {
			if !Equal(a.Props[i], b.Props[i]) {
				return false
			}
		}
		return true
	case *Dot:
		b, ok := b.(*Dot)
		return ok && a.Name == b.Name && equalExpr(a.X, b.X)
	case *Index:
		b, ok := b.(*Index)
		return ok && equalExpr(a.X, b.X) && equalExpr(a.Index, b.Index)
	case *Call:
		b, ok := b.(*Call)
		return ok && a.UDF == b.UDF && a.Name == b.Name && equalExprs(a.Args, b.Args)
	case *Unary:
		b, ok := b.(*Unary)
		return ok && a.Op == b.Op && equalExpr(a.X, b.X)
	case *Binary:
		b, ok := b.(*Binary)
		return ok && a.Op == b.Op && equalExpr(a.L, b.L) && equalExpr(a.R, b.R)
	case *In:
		b, ok := b.(*In)
		return ok && a.Not == b.Not && equalExpr(a.X, b.X) && equalExprs(a.List, b.List)
	case *Between:
		b, ok := b.(*Between)
		return ok && a.Not == b.Not && equalExpr(a.X, b.X) && equalExpr(a.Lo, b.Lo) && equalExpr(a.Hi, b.Hi)
	case *Like:
		b, ok := b.(*Like)
		return ok && a.Not == b.Not && equalExpr(a.X, b.X) && equalExpr(a.Pattern, b.Pattern) &&
			Equal(a.Escape, b.Escape)
	case *Conditional:
		b, ok := b.(*Conditional)
		return ok && equalExpr(a.Cond, b.Cond) && equalExpr(a.Then, b.Then) && equalExpr(a.Else, b.Else)
	case *Subquery:
		b, ok := b.(*Subquery)
		return ok && a.Kind == b.Kind && Equal(a.Query, b.Query)
	}
	panic("BUG: ast: unknown expression type")
}
