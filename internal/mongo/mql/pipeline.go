package mql

import (
	"math"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// maxBuffered bounds the state a pipeline buffers (and any single value it builds), in bytes.
const maxBuffered = 100 << 20

// maxStages bounds the length of a pipeline.
const maxStages = 1000

// LookupFunc returns all documents of another collection of the same database; $lookup uses it.
type LookupFunc func(collection string) ([]bson.D, error)

// Pipeline is a parsed aggregation pipeline. It is immutable and safe for concurrent use; Run may be
// called many times.
type Pipeline struct {
	stages   []stage
	leading  *Filter
	lookup   LookupFunc
	memLimit int64
}

// stage is one parsed pipeline stage. run transforms the whole input; blocking stages charge what
// they hold to the budget.
type stage interface {
	run(r *runState, in []bson.D) ([]bson.D, error)
}

// runState is the state of one Run: the memory budget and the collections $lookup has read.
type runState struct {
	p       *Pipeline
	used    int64 // bytes buffered by the current stage
	foreign map[string][]bson.D
	// hold, when set, is told of the most any stage has buffered so far
	// (held), as it grows.
	hold func(n int64) error
	held int64
}

// charge accounts n bytes of buffered state against the limit.
func (r *runState) charge(n int64, stageName string) error {
	r.used += n
	if r.used > r.p.memLimit {
		return newError(CodeExceededMemoryLimit, "Exceeded memory limit for %s, but didn't allow external sort. Pass allowDiskUse:true to opt in.", stageName)
	}
	if r.hold != nil && r.used > r.held {
		if err := r.hold(r.used - r.held); err != nil {
			return err
		}
		r.held = r.used
	}
	return nil
}

// ParsePipeline parses aggregation stages: $match $project $addFields/$set $unset $group $sort $skip
// $limit $count $unwind $lookup (localField/foreignField) $replaceRoot/$replaceWith, with the
// accumulators $sum $avg $min $max $first $last $push $addToSet $count and the expression operators
// of expr.go. lookup serves $lookup and may be nil when the pipeline has none.
func ParsePipeline(stages []bson.D, lookup LookupFunc) (*Pipeline, error) {
	if len(stages) > maxStages {
		return nil, newError(7749501, "Pipeline length must be no longer than %d stages.", maxStages)
	}
	p := &Pipeline{lookup: lookup, memLimit: maxBuffered}
	for i, s := range stages {
		if len(s) != 1 {
			return nil, newError(40323, "A pipeline stage specification object must contain exactly one field.")
		}
		st, err := parseStage(s[0].Key, s[0].Value, lookup)
		if err != nil {
			return nil, err
		}
		if m, ok := st.(*matchStage); ok && i == 0 {
			p.leading = m.f
		}
		p.stages = append(p.stages, st)
	}
	return p, nil
}

// LeadingMatch returns the filter of a leading $match stage, or nil if the pipeline does not start
// with one, so a caller can push it down to an index or a partition. Run still applies it.
func (p *Pipeline) LeadingMatch() *Filter {
	return p.leading
}

// Run runs the pipeline over docs and returns the result; docs are not modified. It fails with code
// 292 (QueryExceededMemoryLimitNoDiskUseAllowed) when a stage ($group, $sort, $lookup, $unwind) would
// buffer more than 100 MB. An error from the LookupFunc is returned as it is.
func (p *Pipeline) Run(docs []bson.D) ([]bson.D, error) { return p.RunHeld(docs, nil) }

// RunHeld is Run that counts what the stages buffer with hold, when not nil: the most one stage has
// buffered so far, in more bytes as it grows (stages run one after another). An error from hold ends
// the run and is returned as it is; the caller releases what hold counted once it is done.
func (p *Pipeline) RunHeld(docs []bson.D, hold func(n int64) error) ([]bson.D, error) {
	r := &runState{p: p, foreign: map[string][]bson.D{}, hold: hold}
	cur := docs
	for _, s := range p.stages {
		r.used = 0 // the limit applies to each stage's buffered state, as in mongod
		next, err := s.run(r, cur)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	if cur == nil {
		cur = []bson.D{}
	}
	return cur, nil
}

func parseStage(name string, v any, lookup LookupFunc) (stage, error) {
	switch name {
	case "$match":
		d, ok := v.(bson.D)
		if !ok {
			return nil, newError(15959, "the match filter must be an expression in an object")
		}
		f, err := ParseFilter(d)
		if err != nil {
			return nil, err
		}
		return &matchStage{f: f}, nil
	case "$project":
		d, ok := v.(bson.D)
		if !ok {
			return nil, newError(15969, "$project specification must be an object")
		}
		if len(d) == 0 {
			return nil, newError(51272, "$project specification must have at least one field")
		}
		pr, err := parseProjection(d, true)
		if err != nil {
			return nil, err
		}
		return &projectStage{p: pr}, nil
	case "$unset":
		var fields []string
		switch x := v.(type) {
		case string:
			fields = []string{x}
		case bson.A:
			for _, f := range x {
				s, ok := f.(string)
				if !ok {
					return nil, newError(31120, "$unset specification must be a string or an array containing only string values")
				}
				fields = append(fields, s)
			}
		default:
			return nil, newError(31002, "$unset specification must be a string or an array")
		}
		if len(fields) == 0 {
			return nil, newError(31119, "$unset specification must be a string or an array with at least one field")
		}
		spec := bson.D{}
		for _, f := range fields {
			spec = append(spec, bson.E{Key: f, Value: int32(0)})
		}
		pr, err := ParseProjection(spec)
		if err != nil {
			return nil, err
		}
		return &projectStage{p: pr}, nil
	case "$addFields", "$set":
		d, ok := v.(bson.D)
		if !ok {
			return nil, newError(40272, "%s specification stage must be an object, got %s", name, typeName(v))
		}
		st := &addFieldsStage{}
		for _, e := range d {
			if err := checkFieldPath(e.Key); err != nil {
				return nil, err
			}
			x, err := parseExpr(e.Value, 1)
			if err != nil {
				return nil, err
			}
			st.paths = append(st.paths, strings.Split(e.Key, "."))
			st.exprs = append(st.exprs, x)
		}
		return st, nil
	case "$group":
		return parseGroup(v)
	case "$sort":
		d, ok := v.(bson.D)
		if !ok {
			return nil, newError(15973, "the $sort key specification must be an object")
		}
		if len(d) == 0 {
			return nil, newError(15976, "$sort stage must have at least one sort key")
		}
		s, err := ParseSort(d)
		if err != nil {
			return nil, err
		}
		return &sortStage{s: s}, nil
	case "$skip", "$limit":
		n, err := stageCount(name, v)
		if err != nil {
			return nil, err
		}
		if name == "$limit" {
			if n == 0 {
				return nil, newError(15958, "the limit must be positive")
			}
			return &limitStage{n: n}, nil
		}
		return &skipStage{n: n}, nil
	case "$count":
		s, ok := v.(string)
		if !ok {
			return nil, newError(40156, "the count field must be a non-empty string")
		}
		if s == "" {
			return nil, newError(40157, "the count field must be a non-empty string")
		}
		if strings.HasPrefix(s, "$") {
			return nil, newError(40158, "the count field cannot be a $-prefixed path")
		}
		if strings.Contains(s, ".") {
			return nil, newError(40160, "the count field cannot contain '.'")
		}
		return &countStage{field: s}, nil
	case "$unwind":
		return parseUnwind(v)
	case "$lookup":
		return parseLookup(v, lookup)
	case "$replaceRoot", "$replaceWith":
		arg := v
		if name == "$replaceRoot" {
			d, ok := v.(bson.D)
			if !ok {
				return nil, newError(40229, "expected an object as specification for $replaceRoot stage, got %s", typeName(v))
			}
			found := false
			for _, e := range d {
				if e.Key != "newRoot" {
					return nil, newError(40415, "BSON field '$replaceRoot.%s' is an unknown field.", e.Key)
				}
				arg, found = e.Value, true
			}
			if !found {
				return nil, newError(40414, "BSON field '$replaceRoot.newRoot' is missing but a required field")
			}
		}
		x, err := parseExpr(arg, 1)
		if err != nil {
			return nil, err
		}
		return &replaceRootStage{x: x}, nil
	}
	return nil, newError(40324, "Unrecognized pipeline stage name: '%s'", name)
}

// ---- simple stages ----

type matchStage struct{ f *Filter }

func (s *matchStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	var out []bson.D
	for _, d := range in {
		if s.f.Match(d) {
			out = append(out, d)
		}
	}
	return out, nil
}

type projectStage struct{ p *Projection }

func (s *projectStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	out := make([]bson.D, len(in))
	for i, d := range in {
		pd, err := s.p.TryApply(d)
		if err != nil {
			return nil, err
		}
		out[i] = pd
	}
	return out, nil
}

type addFieldsStage struct {
	paths [][]string
	exprs []expression
}

func (s *addFieldsStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	out := make([]bson.D, len(in))
	for i, d := range in {
		c := &evalCtx{root: d}
		vals := make([]any, len(s.exprs))
		for j, x := range s.exprs {
			v, err := x.eval(c)
			if err != nil {
				return nil, err
			}
			vals[j] = v
		}
		cur := d
		for j, v := range vals {
			cur = setField(cur, s.paths[j], v)
		}
		out[i] = cur
	}
	return out, nil
}

// setField returns doc with the (dotted) field set to v, creating documents on the way and setting
// the field in every document element of arrays on the way; a missing v removes the field.
func setField(doc bson.D, parts []string, v any) bson.D {
	idx := slices.IndexFunc(doc, func(e bson.E) bool { return e.Key == parts[0] })
	out := slices.Clone(doc)
	if len(parts) == 1 {
		switch {
		case v == missing && idx >= 0:
			return slices.Delete(out, idx, idx+1)
		case v == missing:
			return out
		case idx >= 0:
			out[idx].Value = v
			return out
		}
		return append(out, bson.E{Key: parts[0], Value: v})
	}
	var child any = bson.D{}
	if idx >= 0 {
		child = doc[idx].Value
	}
	var nv any
	switch c := child.(type) {
	case bson.D:
		nv = setField(c, parts[1:], v)
	case bson.A:
		a := make(bson.A, len(c))
		for i, el := range c {
			if ed, ok := el.(bson.D); ok {
				a[i] = setField(ed, parts[1:], v)
			} else {
				a[i] = setField(bson.D{}, parts[1:], v)
			}
		}
		nv = a
	default:
		nv = setField(bson.D{}, parts[1:], v)
	}
	if idx >= 0 {
		out[idx].Value = nv
		return out
	}
	return append(out, bson.E{Key: parts[0], Value: nv})
}

type sortStage struct{ s *Sort }

func (s *sortStage) run(r *runState, in []bson.D) ([]bson.D, error) {
	for _, d := range in {
		if err := r.charge(approxSize(d), "$sort"); err != nil {
			return nil, err
		}
	}
	out := slices.Clone(in)
	slices.SortStableFunc(out, s.s.Compare)
	return out, nil
}

type skipStage struct{ n int64 }

func (s *skipStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	if s.n >= int64(len(in)) {
		return nil, nil
	}
	return in[s.n:], nil
}

type limitStage struct{ n int64 }

func (s *limitStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	if s.n >= int64(len(in)) {
		return in, nil
	}
	return in[:s.n], nil
}

type countStage struct{ field string }

func (s *countStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	if len(in) == 0 {
		return nil, nil
	}
	var n any = int32(len(in))
	if len(in) > math.MaxInt32 {
		n = int64(len(in))
	}
	return []bson.D{{{Key: s.field, Value: n}}}, nil
}

type replaceRootStage struct{ x expression }

func (s *replaceRootStage) run(_ *runState, in []bson.D) ([]bson.D, error) {
	out := make([]bson.D, len(in))
	for i, d := range in {
		v, err := s.x.eval(&evalCtx{root: d})
		if err != nil {
			return nil, err
		}
		nd, ok := v.(bson.D)
		if !ok {
			return nil, newError(40228, "'newRoot' expression must evaluate to an object, but resulting value was: %s. Type of resulting value: '%s'. Input document: %s", formatValue(unmissing(v)), typeNameOf(v), truncate(formatValue(d)))
		}
		out[i] = nd
	}
	return out, nil
}

func truncate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// ---- $unwind ----

type unwindStage struct {
	path     []string
	index    string
	preserve bool
}

func parseUnwind(v any) (stage, error) {
	st := &unwindStage{}
	var path string
	switch x := v.(type) {
	case string:
		path = x
	case bson.D:
		for _, e := range x {
			switch e.Key {
			case "path":
				s, ok := e.Value.(string)
				if !ok {
					return nil, newError(28808, "expected a string as the path for $unwind stage, got %s", typeName(e.Value))
				}
				path = s
			case "includeArrayIndex":
				s, ok := e.Value.(string)
				if !ok || s == "" || strings.HasPrefix(s, "$") {
					return nil, newError(28810, "expected a non-empty string for the includeArrayIndex option to $unwind stage")
				}
				st.index = s
			case "preserveNullAndEmptyArrays":
				b, ok := e.Value.(bool)
				if !ok {
					return nil, newError(28809, "expected a boolean for the preserveNullAndEmptyArrays option to $unwind stage")
				}
				st.preserve = b
			default:
				return nil, newError(28811, "unrecognized option to $unwind stage: %s", e.Key)
			}
		}
		if path == "" {
			return nil, newError(28812, "no path specified to $unwind stage")
		}
	default:
		return nil, newError(15981, "expected either a string or an object as specification for $unwind stage, got %s", typeName(v))
	}
	if !strings.HasPrefix(path, "$") || len(path) < 2 {
		return nil, newError(28818, "path option to $unwind stage should be prefixed with a '$': %s", path)
	}
	st.path = strings.Split(path[1:], ".")
	for _, p := range st.path {
		if p == "" {
			return nil, newError(15998, "FieldPath field names may not be empty strings.")
		}
	}
	return st, nil
}

func (s *unwindStage) run(r *runState, in []bson.D) ([]bson.D, error) {
	var out []bson.D
	idxPath := strings.Split(s.index, ".")
	withIndex := func(d bson.D, i any) bson.D {
		if s.index == "" {
			return d
		}
		return setField(d, idxPath, i)
	}
	for _, d := range in {
		v := plainValue(d, s.path)
		switch x := v.(type) {
		case bson.A:
			if len(x) == 0 {
				if s.preserve {
					out = append(out, withIndex(setField(d, s.path, missing), nil))
				}
				continue
			}
			for i, el := range x {
				// Each output document is a shallow copy along the path: charge that.
				if err := r.charge(int64(64+16*len(d)), "$unwind"); err != nil {
					return nil, err
				}
				out = append(out, withIndex(setField(d, s.path, el), int64(i)))
			}
		default:
			if isNullish(unmissing(v)) {
				if s.preserve {
					out = append(out, withIndex(d, nil))
				}
				continue
			}
			out = append(out, withIndex(d, nil))
		}
	}
	return out, nil
}

// plainValue follows a path through documents only (as $unwind does), returning missing when it
// does not reach a value.
func plainValue(d bson.D, parts []string) any {
	var cur any = d
	for _, p := range parts {
		x, ok := cur.(bson.D)
		if !ok {
			return missing
		}
		i := slices.IndexFunc(x, func(e bson.E) bool { return e.Key == p })
		if i < 0 {
			return missing
		}
		cur = x[i].Value
	}
	return cur
}

// ---- $lookup ----

type lookupStage struct {
	from, local, foreign, as string
	fn                       LookupFunc
}

func parseLookup(v any, fn LookupFunc) (stage, error) {
	d, ok := v.(bson.D)
	if !ok {
		return nil, newError(CodeFailedToParse, "the $lookup stage specification must be an object, but found %s", typeName(v))
	}
	st := &lookupStage{fn: fn}
	for _, e := range d {
		s, isString := e.Value.(string)
		switch e.Key {
		case "from", "localField", "foreignField", "as":
			if !isString {
				return nil, newError(CodeFailedToParse, "$lookup argument '%s: %s' must be a string, is type %s", e.Key, formatValue(e.Value), typeName(e.Value))
			}
		case "pipeline", "let":
			return nil, badValue("$lookup with a pipeline is not supported")
		default:
			return nil, newError(CodeFailedToParse, "unknown argument to $lookup: %s", e.Key)
		}
		switch e.Key {
		case "from":
			st.from = s
		case "localField":
			st.local = s
		case "foreignField":
			st.foreign = s
		case "as":
			st.as = s
		}
	}
	if st.as == "" {
		return nil, newError(CodeFailedToParse, "must specify 'as' field for a $lookup")
	}
	if st.from == "" || st.local == "" || st.foreign == "" {
		return nil, newError(CodeFailedToParse, "$lookup requires either 'pipeline' or both 'localField' and 'foreignField' to be specified")
	}
	if fn == nil {
		return nil, badValue("$lookup is not available here")
	}
	return st, nil
}

func (s *lookupStage) run(r *runState, in []bson.D) ([]bson.D, error) {
	foreign, ok := r.foreign[s.from]
	if !ok {
		var err error
		foreign, err = s.fn(s.from)
		if err != nil {
			return nil, err
		}
		r.foreign[s.from] = foreign
		for _, d := range foreign {
			if err := r.charge(approxSize(d), "$lookup"); err != nil {
				return nil, err
			}
		}
	}
	fpath := strings.Split(s.foreign, ".")
	out := make([]bson.D, len(in))
	for i, d := range in {
		// The local values: the field's values with arrays contributing their elements; null if none.
		var locals []any
		walkPath(d, strings.Split(s.local, "."), func(v any, miss bool) {
			if miss {
				locals = append(locals, nil)
				return
			}
			if a, ok := v.(bson.A); ok && len(a) > 0 {
				locals = append(locals, a...)
				return
			}
			locals = append(locals, v)
		})
		if len(locals) == 0 {
			locals = []any{nil}
		}
		eq := (&inPred{values: locals}).finish()
		matched := bson.A{}
		for _, fd := range foreign {
			m := pathMatcher{path: fpath, pred: eq}
			if m.match(fd) {
				matched = append(matched, fd)
				if err := r.charge(approxSize(fd), "$lookup"); err != nil {
					return nil, err
				}
			}
		}
		out[i] = setField(d, strings.Split(s.as, "."), matched)
	}
	return out, nil
}

// ---- $group ----

type groupStage struct {
	id    expression
	names []string
	accs  []accSpec
}

type accSpec struct {
	op string
	x  expression
}

func parseGroup(v any) (stage, error) {
	d, ok := v.(bson.D)
	if !ok {
		return nil, newError(15947, "a group's fields must be specified in an object")
	}
	st := &groupStage{}
	hasID := false
	for _, e := range d {
		if e.Key == "_id" {
			x, err := parseExpr(e.Value, 1)
			if err != nil {
				return nil, err
			}
			st.id, hasID = x, true
			continue
		}
		if strings.Contains(e.Key, ".") {
			return nil, newError(40235, "The field name '%s' cannot contain '.'", e.Key)
		}
		if strings.HasPrefix(e.Key, "$") {
			return nil, newError(40236, "The field name '%s' cannot be an operator name", e.Key)
		}
		spec, ok := e.Value.(bson.D)
		if !ok || len(spec) != 1 {
			return nil, newError(40234, "The field '%s' must be an accumulator object", e.Key)
		}
		op := spec[0].Key
		switch op {
		case "$sum", "$avg", "$min", "$max", "$first", "$last", "$push", "$addToSet":
		case "$count":
			if c, ok := spec[0].Value.(bson.D); !ok || len(c) != 0 {
				return nil, newError(CodeTypeMismatch, "$count takes no arguments, i.e. $count:{}")
			}
			st.names = append(st.names, e.Key)
			st.accs = append(st.accs, accSpec{op: "$sum", x: literalExpr{int32(1)}})
			continue
		default:
			return nil, newError(15952, "unknown group operator '%s'", op)
		}
		if _, isArray := spec[0].Value.(bson.A); isArray {
			return nil, newError(40237, "The %s accumulator is a unary operator", op)
		}
		x, err := parseExpr(spec[0].Value, 1)
		if err != nil {
			return nil, err
		}
		st.names = append(st.names, e.Key)
		st.accs = append(st.accs, accSpec{op: op, x: x})
	}
	if !hasID {
		return nil, newError(15955, "a group specification must include an _id")
	}
	return st, nil
}

// group is the state of one group: its key and one accumulator state per output field.
type group struct {
	key    any
	states []accState
}

type accState struct {
	val   any   // $sum total, $min/$max/$first/$last value
	count int64 // $avg count, $first "seen" marker
	list  bson.A
	set   *valueSet // $addToSet: the values in list
	seen  bool
}

func (s *groupStage) run(r *runState, in []bson.D) ([]bson.D, error) {
	buckets := map[string][]*group{}
	var order []*group
	for _, d := range in {
		c := &evalCtx{root: d}
		k, err := s.id.eval(c)
		if err != nil {
			return nil, err
		}
		k = unmissing(k)
		hk := hashKey(k)
		var g *group
		for _, cand := range buckets[hk] {
			if Compare(cand.key, k) == 0 {
				g = cand
				break
			}
		}
		if g == nil {
			g = &group{key: k, states: make([]accState, len(s.accs))}
			buckets[hk] = append(buckets[hk], g)
			order = append(order, g)
			if err := r.charge(approxSize(k)+64, "$group"); err != nil {
				return nil, err
			}
		}
		for i, acc := range s.accs {
			v, err := acc.x.eval(c)
			if err != nil {
				return nil, err
			}
			if err := accumulate(r, &g.states[i], acc.op, v); err != nil {
				return nil, err
			}
		}
	}
	out := make([]bson.D, 0, len(order))
	for _, g := range order {
		d := bson.D{{Key: "_id", Value: g.key}}
		for i, acc := range s.accs {
			d = append(d, bson.E{Key: s.names[i], Value: finish(&g.states[i], acc.op)})
		}
		out = append(out, d)
	}
	return out, nil
}

func accumulate(r *runState, st *accState, op string, v any) error {
	switch op {
	case "$sum", "$avg":
		if !isNumber(v) {
			return nil
		}
		if st.val == nil {
			st.val = int32(0)
		}
		st.val, _ = arith('+', st.val, v)
		st.count++
	case "$min", "$max":
		if isNullish(unmissing(v)) {
			return nil
		}
		c := Compare(v, st.val)
		if !st.seen || (op == "$min" && c < 0) || (op == "$max" && c > 0) {
			st.val, st.seen = v, true
		}
	case "$first":
		if !st.seen {
			st.val, st.seen = unmissing(v), true
		}
	case "$last":
		st.val, st.seen = unmissing(v), true
	case "$push", "$addToSet":
		if v == missing {
			return nil
		}
		if op == "$addToSet" {
			if st.set == nil {
				st.set = newValueSet()
			}
			if !st.set.add(v) {
				return nil
			}
		}
		if err := r.charge(approxSize(v), "$group"); err != nil {
			return err
		}
		st.list = append(st.list, v)
	}
	return nil
}

func finish(st *accState, op string) any {
	switch op {
	case "$sum":
		if st.val == nil {
			return int32(0)
		}
		return st.val
	case "$avg":
		if st.count == 0 {
			return nil
		}
		if kindOf(st.val) == kindDecimal {
			x, _ := toBigFloat(st.val)
			if x == nil {
				return st.val
			}
			return fromBigFloat(bigFloat().Quo(x, bigFloat().SetInt64(st.count)))
		}
		f, _ := Float(st.val)
		return f / float64(st.count)
	case "$push", "$addToSet":
		if st.list == nil {
			return bson.A{}
		}
		return st.list
	}
	return st.val
}

// approxSize estimates the BSON size of a value in bytes, for memory accounting.
func approxSize(v any) int64 {
	switch x := v.(type) {
	case bson.D:
		n := int64(5)
		for _, e := range x {
			n += int64(len(e.Key)) + 2 + approxSize(e.Value)
		}
		return n
	case bson.A:
		n := int64(5)
		for _, e := range x {
			n += 4 + approxSize(e)
		}
		return n
	case string:
		return int64(len(x)) + 5
	case bson.Symbol:
		return int64(len(x)) + 5
	case bson.JavaScript:
		return int64(len(x)) + 5
	case bson.Binary:
		return int64(len(x.Data)) + 5
	case bson.Regex:
		return int64(len(x.Pattern)+len(x.Options)) + 2
	case bson.CodeWithScope:
		return int64(len(x.Code)) + 9 + approxSize(x.Scope)
	case bson.DBPointer:
		return int64(len(x.DB)) + 17
	case bson.Decimal128:
		return 16
	case bson.ObjectID:
		return 12
	}
	return 8
}
