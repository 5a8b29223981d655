package eval

import (
	"math"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/parsecdb/parsec/internal/fulltext"
	"github.com/parsecdb/parsec/internal/query/ast"
	"github.com/parsecdb/parsec/internal/vector"
)

// Search is what the vector and full-text functions need from the
// container and from the executor: the container's policies, the
// resolved form of each VectorDistance call, the BM25 scorers of the
// FullTextScore calls (built from statistics over the whole container),
// and the counters of the work done, which the engine charges.
//
// A Search is built once per compiled query and then only read (the
// counters are atomic), so one may serve concurrent evaluations.
type Search struct {
	// Embeddings is the container's vectorEmbeddingPolicy by path
	// ("/a/b").
	Embeddings map[string]vector.Embedding
	// Text is the container's full-text policy; nil means none (English,
	// the service's default language).
	Text *fulltext.Policy
	// Vectors holds the resolved VectorDistance calls (ResolveVector).
	// A call not in it is resolved on each evaluation.
	Vectors map[*ast.Call]*VectorCall
	// Scores holds the scorer of each FullTextScore call. FullTextScore
	// fails without one: it is only valid in ORDER BY RANK, where the
	// executor gathers the statistics first.
	Scores map[*ast.Call]*fulltext.Scorer
	// Work counts what the search functions did.
	Work *SearchWork

	// queries caches the analysed search arguments of full-text calls
	// whose arguments are constants (*ast.Call → []fulltext.Query).
	queries sync.Map
}

// SearchWork counts the work of the search functions, for request units
// and explain output. Safe for concurrent use.
type SearchWork struct {
	// Vectors is the number of vector comparisons, VectorDims the sum of
	// their dimensions.
	Vectors, VectorDims atomic.Int64
	// Texts is the number of texts analysed, Terms the terms they held.
	Texts, Terms atomic.Int64
}

// VectorCall is a VectorDistance call resolved against the container's
// policy: the distance function and data type to use (the options' when
// given, else the embedding's at the call's path, else cosine and
// float32, the service's defaults), the options, and bruteForce.
type VectorCall struct {
	Path       string // the embedding path matched, "" when none
	Func       vector.DistanceFunction
	Type       vector.DataType
	Dims       int // the embedding's dimensions, 0 when no embedding
	Options    vector.QueryOptions
	BruteForce bool
	// consts holds the arguments that are constants (the query vector),
	// converted once; nil for an argument read from the document or not
	// a vector.
	consts [2][]float32
}

// Ascending reports whether ORDER BY VectorDistance sorts ascending: for
// the Euclidean distance lower is closer; cosine and dot product rank
// higher scores first (learn.microsoft.com/azure/cosmos-db/nosql/query/vectordistance).
func (vc *VectorCall) Ascending() bool { return vc.Func == vector.Euclidean }

// ArgPath returns the property path of e below its root alias (c.a.b,
// c["a"].b → [a b]), or false when e is not such a path.
func ArgPath(e ast.Expr) ([]string, bool) {
	var segs []string
	for {
		switch x := e.(type) {
		case *ast.Ident:
			for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
				segs[i], segs[j] = segs[j], segs[i]
			}
			return segs, len(segs) > 0
		case *ast.Dot:
			segs = append(segs, x.Name)
			e = x.X
		case *ast.Index:
			s, ok := x.Index.(*ast.StringLit)
			if !ok {
				return nil, false
			}
			segs = append(segs, s.Value)
			e = x.X
		default:
			return nil, false
		}
	}
}

// ArgRoot returns the alias at the root of a property path.
func ArgRoot(e ast.Expr) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name, true
		case *ast.Dot:
			e = x.X
		case *ast.Index:
			e = x.X
		default:
			return "", false
		}
	}
}

func policyPath(segs []string) string { return "/" + strings.Join(segs, "/") }

// IsVectorDistance reports whether c calls VectorDistance.
func IsVectorDistance(c *ast.Call) bool { return !c.UDF && upperASCII(c.Name) == "VECTORDISTANCE" }

// IsFullTextScore reports whether c calls FullTextScore.
func IsFullTextScore(c *ast.Call) bool { return !c.UDF && upperASCII(c.Name) == "FULLTEXTSCORE" }

// IsRRF reports whether c calls RRF.
func IsRRF(c *ast.Call) bool { return !c.UDF && upperASCII(c.Name) == "RRF" }

// ResolveVector resolves a VectorDistance call: its bruteForce and
// options arguments must be constants (literals or parameters); the
// embedding is the policy's at the path of the first or second argument.
func (s *Search) ResolveVector(c *ast.Call, params map[string]Value) (*VectorCall, error) {
	vc := &VectorCall{Func: vector.Cosine, Type: vector.Float32}
	for _, a := range c.Args[:min(2, len(c.Args))] {
		segs, ok := ArgPath(a)
		if !ok || s == nil {
			continue
		}
		if e, ok := s.Embeddings[policyPath(segs)]; ok {
			vc.Path, vc.Func, vc.Type, vc.Dims = e.Path, e.DistanceFunction, e.DataType, e.Dimensions
			break
		}
	}
	constant := func(e ast.Expr, what string) (Value, error) {
		if !isConstant(e) {
			return Value{}, errorf(e.Pos(), ErrBadArgument, "the %s argument of VectorDistance must be a constant", what)
		}
		return Eval(e, &Env{Params: params})
	}
	if len(c.Args) > 2 {
		v, err := constant(c.Args[2], "bruteForce")
		if err != nil {
			return nil, err
		}
		if v.Kind() != Bool {
			return nil, errorf(c.Args[2].Pos(), ErrBadArgument, "the bruteForce argument of VectorDistance must be a boolean, not %s", v)
		}
		vc.BruteForce = v.AsBool()
	}
	if len(c.Args) > 3 {
		v, err := constant(c.Args[3], "options")
		if err != nil {
			return nil, err
		}
		if v.Kind() != Object {
			return nil, errorf(c.Args[3].Pos(), ErrBadArgument, "the options argument of VectorDistance must be an object, not %s", v)
		}
		for i := range v.Len() {
			k, x := v.Member(i)
			bad := func(want string) error {
				return errorf(c.Args[3].Pos(), ErrBadArgument, "VectorDistance option %s must be %s, not %s", k, want, x)
			}
			switch strings.ToLower(k) {
			case "distancefunction":
				name, ok := strArg(x)
				if !ok {
					return nil, bad("a string")
				}
				f, err := vector.ParseDistanceFunction(name)
				if err != nil {
					return nil, errorf(c.Args[3].Pos(), ErrBadArgument, "VectorDistance option distanceFunction: %v", err)
				}
				vc.Func = f
			case "datatype":
				name, ok := strArg(x)
				if !ok {
					return nil, bad("a string")
				}
				t, err := vector.ParseDataType(name)
				if err != nil {
					return nil, errorf(c.Args[3].Pos(), ErrBadArgument, "VectorDistance option dataType: %v", err)
				}
				vc.Type = t
			case "searchlistsizemultiplier", "quantizedvectorlistmultiplier":
				n, ok := x.AsInt()
				if !ok || n < 0 || n > math.MaxInt32 {
					return nil, bad("a positive integer")
				}
				if strings.EqualFold(k, "searchListSizeMultiplier") {
					vc.Options.SearchListSizeMultiplier = int(n)
				} else {
					vc.Options.QuantizedVectorListMultiplier = int(n)
				}
			case "filterpriority":
				f, ok := numArg(x)
				if !ok {
					return nil, bad("a number")
				}
				vc.Options.FilterPriority = f
			default:
				return nil, errorf(c.Args[3].Pos(), ErrBadArgument, "unknown VectorDistance option %s (want distanceFunction, dataType, searchListSizeMultiplier, quantizedVectorListMultiplier or filterPriority)", k)
			}
		}
		if err := vc.Options.Validate(); err != nil {
			return nil, errorf(c.Args[3].Pos(), ErrBadArgument, "VectorDistance: %v", err)
		}
	}
	// Constant vectors (the query's) are converted once, with the data
	// type decided above.
	for i, a := range c.Args[:min(2, len(c.Args))] {
		if isConstant(a) {
			if v, err := Eval(a, &Env{Params: params}); err == nil {
				vc.consts[i], _ = vectorOf(v, vc.Type)
			}
		}
	}
	return vc, nil
}

// isConstant reports whether e reads no document: literals, parameters
// and constructors of them.
func isConstant(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.StringLit, *ast.NumberLit, *ast.BoolLit, *ast.NullLit, *ast.UndefinedLit, *ast.Param:
		return true
	case *ast.Unary:
		return isConstant(e.X)
	case *ast.ArrayCreate:
		for _, x := range e.Elems {
			if !isConstant(x) {
				return false
			}
		}
		return true
	case *ast.ObjectCreate:
		for _, p := range e.Props {
			if !isConstant(p.X) {
				return false
			}
		}
		return true
	}
	return false
}

// vectorOf converts an array of numbers to a vector of type t; false when
// v is not one (a multi-dimensional array, a string): the service then
// gives no score and no error.
func vectorOf(v Value, t vector.DataType) ([]float32, bool) {
	if v.Kind() != Array || v.Len() == 0 || v.Len() > vector.MaxDimensions {
		return nil, false
	}
	f := make([]float64, v.Len())
	for i := range f {
		x, ok := numArg(v.Elem(i))
		if !ok {
			return nil, false
		}
		f[i] = x
	}
	out, err := vector.FromFloat64(f, 0, t)
	return out, err == nil
}

func fnVectorDistance(c *callCtx, args []Value) (Value, error) {
	s := c.env.Search
	var vc *VectorCall
	if s != nil {
		vc = s.Vectors[c.node]
	}
	if vc == nil {
		var err error
		if vc, err = s.ResolveVector(c.node, c.env.Params); err != nil {
			return Value{}, err
		}
	}
	vec := func(i int) ([]float32, bool) {
		if v := vc.consts[i]; v != nil {
			return v, true
		}
		return vectorOf(args[i], vc.Type)
	}
	a, ok := vec(0)
	if !ok {
		return undef, nil
	}
	b, ok := vec(1)
	if !ok || len(a) != len(b) {
		return undef, nil
	}
	score, err := vector.Score(vc.Func, a, b)
	if err != nil {
		return undef, nil // lengths were checked: not reached
	}
	if s != nil && s.Work != nil {
		s.Work.Vectors.Add(1)
		s.Work.VectorDims.Add(int64(len(a)))
	}
	return NumberValue(float64(score)), nil
}

// analyzer returns the analyzer of the text at the path argument e.
func (s *Search) analyzer(e ast.Expr) *fulltext.Analyzer {
	var p *fulltext.Policy
	if s != nil {
		p = s.Text
	}
	segs, _ := ArgPath(e)
	return p.Analyzer(segs)
}

// prepare analyses a document's text, counting the work.
func (s *Search) prepare(a *fulltext.Analyzer, text string) *fulltext.Text {
	t := a.Prepare(text)
	if s != nil && s.Work != nil {
		s.Work.Texts.Add(1)
		s.Work.Terms.Add(int64(t.Length()))
	}
	return t
}

// TextQuery analyses one search argument: a string, or the fuzzy form
// {"term": s, "distance": d}.
func TextQuery(a *fulltext.Analyzer, v Value) (fulltext.Query, bool, error) {
	switch v.Kind() {
	case String:
		return a.Term(v.AsString()), true, nil
	case Object:
		term, ok1 := v.Get("term")
		dist, ok2 := v.Get("distance")
		if !ok1 || !ok2 || term.Kind() != String || dist.Kind() != Number || v.Len() != 2 {
			return fulltext.Query{}, false, nil
		}
		q, err := a.FuzzyTerm(term.AsString(), dist.AsFloat())
		return q, err == nil, err
	}
	return fulltext.Query{}, false, nil
}

// textQueries analyses the search arguments args (an array argument
// stands for its elements, as FullTextScore(c.t, ["a", "b"]) is written).
func textQueries(c *callCtx, a *fulltext.Analyzer, args []Value) ([]fulltext.Query, bool, error) {
	var out []fulltext.Query
	for _, v := range args {
		vals := []Value{v}
		if v.Kind() == Array {
			vals = v.Elems()
		}
		for _, x := range vals {
			q, ok, err := TextQuery(a, x)
			if err != nil {
				return nil, false, errorf(c.node.Pos(), ErrBadArgument, "%s: %v", c.node.Name, err)
			}
			if !ok {
				return nil, false, nil
			}
			out = append(out, q)
		}
	}
	return out, true, nil
}

// fullTextContains is FullTextContains (mode 0), FullTextContainsAll (1)
// and FullTextContainsAny (2): false for a text that is not a string.
func fullTextContains(mode int) func(c *callCtx, args []Value) (Value, error) {
	return func(c *callCtx, args []Value) (Value, error) {
		s := c.env.Search
		a := s.analyzer(c.node.Args[0])
		qs, ok, err := s.cachedQueries(c, a, args[1:])
		if err != nil || !ok {
			return undef, err
		}
		text, ok := strArg(args[0])
		if !ok {
			return BoolValue(false), nil
		}
		t := s.prepare(a, text)
		switch mode {
		case 1:
			for _, q := range qs {
				if !t.Contains(q) {
					return BoolValue(false), nil
				}
			}
			return BoolValue(true), nil
		default:
			for _, q := range qs {
				if t.Contains(q) {
					return BoolValue(true), nil
				}
			}
			return BoolValue(false), nil
		}
	}
}

// cachedQueries is textQueries, remembered per call when the call's search
// arguments are constants (the same for every row).
func (s *Search) cachedQueries(c *callCtx, a *fulltext.Analyzer, args []Value) ([]fulltext.Query, bool, error) {
	if s == nil {
		return textQueries(c, a, args)
	}
	if qs, ok := s.queries.Load(c.node); ok {
		return qs.([]fulltext.Query), true, nil
	}
	qs, ok, err := textQueries(c, a, args)
	if err != nil || !ok {
		return qs, ok, err
	}
	for _, e := range c.node.Args[1:] {
		if !isConstant(e) {
			return qs, ok, nil
		}
	}
	s.queries.Store(c.node, qs)
	return qs, true, nil
}

// ScoreQueries analyses the search terms of a FullTextScore call (its
// arguments after the path), which must be constants.
func (s *Search) ScoreQueries(c *ast.Call, params map[string]Value) ([]fulltext.Query, error) {
	a := s.analyzer(c.Args[0])
	args := make([]Value, 0, len(c.Args)-1)
	for _, e := range c.Args[1:] {
		if !isConstant(e) {
			return nil, errorf(e.Pos(), ErrBadArgument, "the search terms of FullTextScore must be constants")
		}
		v, err := Eval(e, &Env{Params: params})
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	qs, ok, err := textQueries(&callCtx{env: &Env{}, node: c}, a, args)
	if err != nil {
		return nil, err
	}
	if !ok || len(qs) == 0 {
		return nil, errorf(c.At, ErrBadArgument, "the search terms of FullTextScore must be strings")
	}
	return qs, nil
}

// TextStats is one document's contribution to the statistics of a
// FullTextScore call: text is the value at its path.
func (s *Search) TextStats(c *ast.Call, qs []fulltext.Query, text Value) fulltext.Stats {
	str, ok := strArg(text)
	if !ok {
		return fulltext.DocStats(nil, qs)
	}
	return fulltext.DocStats(s.prepare(s.analyzer(c.Args[0]), str), qs)
}

func fnFullTextScore(c *callCtx, args []Value) (Value, error) {
	s := c.env.Search
	var sc *fulltext.Scorer
	if s != nil {
		sc = s.Scores[c.node]
	}
	if sc == nil {
		return Value{}, errorf(c.node.At, ErrBadArgument, "FullTextScore is only allowed in an ORDER BY RANK clause")
	}
	a := s.analyzer(c.node.Args[0])
	qs, ok, err := s.cachedQueries(c, a, args[1:])
	if err != nil || !ok {
		return undef, err
	}
	text, ok := strArg(args[0])
	if !ok {
		return NumberValue(0), nil
	}
	return NumberValue(sc.ScoreText(s.prepare(a, text), qs)), nil
}

// fnFullTextScoreWith is _FullTextScore(path, [terms], documentCount,
// totalWordCount, [hitCounts]): FullTextScore with the statistics given,
// for the component queries of a hybrid query plan, which the SDKs fill
// in from the plan's global statistics query.
func fnFullTextScoreWith(c *callCtx, args []Value) (Value, error) {
	s := c.env.Search
	a := s.analyzer(c.node.Args[0])
	qs, ok, err := textQueries(c, a, args[1:2])
	if err != nil || !ok {
		return undef, err
	}
	n, ok1 := args[2].AsInt()
	total, ok2 := args[3].AsInt()
	if !ok1 || !ok2 || n < 0 || total < 0 || args[4].Kind() != Array || args[4].Len() != len(qs) {
		return Value{}, errorf(c.node.At, ErrBadArgument, "_FullTextScore needs a document count, a word count and one hit count per term")
	}
	st := fulltext.Stats{Documents: uint64(n), TotalLength: uint64(total), DF: make([]uint64, len(qs))}
	for i := range qs {
		h, ok := args[4].Elem(i).AsInt()
		if !ok || h < 0 {
			return Value{}, errorf(c.node.At, ErrBadArgument, "_FullTextScore: hit counts must be non-negative integers")
		}
		st.DF[i] = uint64(h)
	}
	text, ok := strArg(args[0])
	if !ok {
		return NumberValue(0), nil
	}
	return NumberValue(fulltext.NewScorer(st).ScoreText(s.prepare(a, text), qs)), nil
}

// fnFullTextWordCount is _FullTextWordCount(path): the number of terms of
// the text at path (0 for no text), for the global statistics query of a
// hybrid query plan.
func fnFullTextWordCount(c *callCtx, args []Value) (Value, error) {
	text, ok := strArg(args[0])
	if !ok {
		return IntValue(0), nil
	}
	s := c.env.Search
	return IntValue(int64(s.prepare(s.analyzer(c.node.Args[0]), text).Length())), nil
}

func fnRRF(c *callCtx, _ []Value) (Value, error) {
	return Value{}, errorf(c.node.At, ErrBadArgument, "RRF is only allowed in an ORDER BY RANK clause")
}

// The search functions join the table at init: their bodies evaluate
// arguments, which looks functions up in the table.
func init() {
	for _, b := range searchFuncs {
		builtins[upperASCII(b.name)] = b
	}
}

var searchFuncs = []*builtin{
	{name: "VectorDistance", min: 2, max: 4, fn: fnVectorDistance},
	{name: "FullTextContains", min: 2, max: 2, fn: fullTextContains(0)},
	{name: "FullTextContainsAll", min: 2, max: -1, fn: fullTextContains(1)},
	{name: "FullTextContainsAny", min: 2, max: -1, fn: fullTextContains(2)},
	{name: "FullTextScore", min: 2, max: -1, fn: fnFullTextScore},
	{name: "RRF", min: 1, max: -1, keepUndefined: true, fn: fnRRF},
	{name: "_FullTextScore", min: 5, max: 5, fn: fnFullTextScoreWith},
	{name: "_FullTextWordCount", min: 1, max: 1, keepUndefined: true, fn: fnFullTextWordCount},
}
