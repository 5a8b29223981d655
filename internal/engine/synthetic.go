package engine

import (
	"bytes"
	"errors"
	"slices"
	"strings"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/query/exec"
	"github.com/parsecdb/parsec/synthkey"
)

// Declared synthetic partition keys.
//
// A container may declare its partition key as a key expression (package
// synthkey), e.g. concat(/date, ".", hash(/vin, 400)), beside an ordinary
// partition key definition whose paths say where each key component is
// stored. Writes compute the key from the document and store it there
// (PrepareWrite), so applications need not; a document that carries the
// right value already is accepted, a wrong one is refused. Reads and
// queries may give the base values instead of the key: a partition key
// header with one value per base path (when that differs from the number of
// key levels), or equalities on every base path in the WHERE clause. They
// resolve to the one key the base values give, or, with random(lo, hi), to
// the hi-lo+1 keys one of which holds the item: a point read tries them, a
// query reads exactly those logical partitions.

// compileSynthetic parses a container's synthetic key and checks it against
// the partition key definition.
func compileSynthetic(expr string, def epk.Definition) (*synthkey.Expr, error) {
	x, err := synthkey.Parse(expr)
	if err != nil {
		return nil, badRequest("parsecSyntheticKey: %v", err)
	}
	if len(def.Paths) == 0 {
		return nil, badRequest("parsecSyntheticKey needs a partition key definition: its paths name the properties that store the computed key")
	}
	if x.Levels() != len(def.Paths) {
		return nil, badRequest("parsecSyntheticKey %s has %d level(s), but the partition key definition has %d path(s)", x, x.Levels(), len(def.Paths))
	}
	for i, p := range x.PartitionKeyPaths() {
		switch {
		case p != "" && p != def.Paths[i]:
			return nil, badRequest("level %d of parsecSyntheticKey is the path %s, so the partition key path %d must be %s, not %s", i+1, p, i+1, p, def.Paths[i])
		case p == "" && slices.Contains(x.Paths(), def.Paths[i]):
			return nil, badRequest("the partition key path %s stores a computed key, so parsecSyntheticKey %s cannot read it", def.Paths[i], x)
		}
	}
	return x, nil
}

// fromComponent converts a key component to a synthkey base value.
func fromComponent(c epk.Component) any {
	switch c.Kind {
	case epk.KindString:
		return c.Str
	case epk.KindNumber:
		return c.Num
	case epk.KindTrue:
		return true
	case epk.KindFalse:
		return false
	case epk.KindNull:
		return nil
	}
	return synthkey.Undefined
}

// synthesize computes a document's synthetic key and stores it in the
// document where it is missing. present holds the raw values at the
// partition key paths, base those at the synthetic key's base paths (both
// from the one scan of the document, see scanPaths). A present value must
// be the computed one (or, for a random suffix, one of the values the base
// values allow).
func (c *Container) synthesize(body []byte, present, base [][]byte) (epk.Key, []byte, error) {
	k, err := c.synth.FromRaw(base, nil)
	if err != nil {
		return nil, nil, badRequest("the item cannot be given the container's synthetic partition key %s: %v", c.synth, err)
	}
	key := epk.FromValues(k)
	var allowed []epk.Key // for a random suffix, built on first need
	var adds []jsondoc.PatchOp
	for i, raw := range present {
		if raw == nil {
			adds = append(adds, jsondoc.PatchOp{Op: "add", Path: pointer(c.paths[i]), Value: key[i].AppendJSON(nil)})
			continue
		}
		have, err := epk.ComponentFromJSON(bytes.TrimSpace(raw))
		if err != nil || have.Equal(key[i]) {
			continue // an invalid value is reported by the caller
		}
		if _, _, random := c.synth.RandomRange(); random {
			if allowed == nil {
				if allowed, err = expandRaw(c.synth, base); err != nil {
					return nil, nil, err
				}
			}
			if slices.ContainsFunc(allowed, func(a epk.Key) bool { return a[i].Equal(have) }) {
				key[i] = have
				continue
			}
			return nil, nil, badRequest("the item's %s is %s, but the container's synthetic partition key %s gives one of %s ... %s for it",
				c.def.Paths[i], have, c.synth, allowed[0][i], allowed[len(allowed)-1][i])
		}
		return nil, nil, badRequest("the item's %s is %s, but the container's synthetic partition key %s gives %s for it",
			c.def.Paths[i], have, c.synth, key[i])
	}
	if len(adds) > 0 {
		if body, err = jsondoc.ApplyPatch(body, adds); err != nil {
			return nil, nil, badRequest("cannot store the synthetic partition key in the item: %v", err)
		}
	}
	return key, body, nil
}

// expandDoc returns every key the document's base values allow.
func expandDoc(x *synthkey.Expr, body []byte) ([]epk.Key, error) {
	sc, err := jsondoc.Scan(body, x.Segments())
	if err != nil {
		return nil, badRequest("the item is not valid JSON: %v", err)
	}
	return expandRaw(x, sc.Values)
}

// expandRaw is expandDoc from the raw values at the base paths.
func expandRaw(x *synthkey.Expr, raws [][]byte) ([]epk.Key, error) {
	base := make([]any, len(raws))
	for i, raw := range raws {
		if raw == nil {
			base[i] = synthkey.Undefined
			continue
		}
		comp, err := epk.ComponentFromJSON(bytes.TrimSpace(raw))
		if err != nil {
			return nil, badRequest("the item's %s cannot be part of a partition key: %v", x.Paths()[i], err)
		}
		base[i] = fromComponent(comp)
	}
	return expand(x, base)
}

func (c *Container) expand(base []any) ([]epk.Key, error) { return expand(c.synth, base) }

func expand(x *synthkey.Expr, base []any) ([]epk.Key, error) {
	keys, err := x.Expand(base)
	if err != nil {
		return nil, badRequest("the base values %v do not give a synthetic partition key %s: %v", base, x, err)
	}
	out := make([]epk.Key, len(keys))
	for i, k := range keys {
		out[i] = epk.FromValues(k)
	}
	return out, nil
}

// checkSyntheticPatch refuses a patched document whose base values no
// longer give the item's key: a patch cannot move an item.
func checkSyntheticPatch(x *synthkey.Expr, doc []byte, key epk.Key) error {
	keys, err := expandDoc(x, doc)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(keys, key.Equal) {
		return badRequest("a patch cannot change the base values of the synthetic partition key %s: the item's key is %s, the patched item would have %s", x, key, keys[0])
	}
	return nil
}

// pointer turns property names into a JSON pointer.
func pointer(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String()
}

// baseHeader reports whether a partition key header gives the base values
// of a synthetic key rather than the key, and returns the keys they give.
func (c *Container) baseHeader(header epk.Key) ([]epk.Key, bool, error) {
	if c.synth == nil || len(header) == c.synth.Levels() || len(header) != len(c.synth.Paths()) {
		return nil, false, nil
	}
	base := make([]any, len(header))
	for i, comp := range header {
		base[i] = fromComponent(comp)
	}
	keys, err := c.expand(base)
	return keys, true, err
}

// headerFits reports whether a write's partition key header is consistent
// with the item's synthetic key: empty (the server computes the key), the
// key itself, or base values that give it.
func (c *Container) headerFits(header, key epk.Key) (bool, error) {
	if len(header) == 0 {
		return true, nil
	}
	keys, isBase, err := c.baseHeader(header)
	if err != nil {
		return false, err
	}
	if isBase {
		return slices.ContainsFunc(keys, key.Equal), nil
	}
	hk, err := c.ResolveKey(header)
	return err == nil && hk.Equal(key), err
}

// locate finds which of the keys holds the item id, for a keyed operation
// given base values with a random suffix; it returns the first key when
// none does (the operation then answers 404).
func (c *Container) locate(keys []epk.Key, id string) (epk.Key, error) {
	for _, k := range keys {
		e, err := c.epkOf(k)
		if err != nil {
			return nil, err
		}
		r, err := c.readItem(Op{Kind: OpRead, ID: id, Key: k, EPK: e})
		if err != nil {
			return nil, err
		}
		if r.Err == nil {
			return k, nil
		}
	}
	return keys[0], nil
}

// syntheticScope resolves base values in a query, from the header or from
// equalities on every base path in the WHERE clause, to the keys they give.
func (c *Container) syntheticScope(filters []exec.Filter, scope QueryScope) (QueryScope, error) {
	var keys []epk.Key
	if scope.HasKey {
		ks, isBase, err := c.baseHeader(scope.Key)
		if err != nil || !isBase {
			return scope, err
		}
		keys = ks
	} else {
		segs := c.synth.Segments()
		base := make([]any, len(segs))
		for i, path := range segs {
			comp, ok := keyComponent(filters, path)
			if !ok {
				return scope, nil
			}
			base[i] = fromComponent(comp)
		}
		var err error
		if keys, err = c.expand(base); err != nil {
			var ve *synthkey.ValueError
			if errors.As(err, &ve) {
				return scope, nil // values no document can have: scan
			}
			return scope, err
		}
	}
	if len(keys) == 1 {
		scope.Key, scope.HasKey, scope.Keys = keys[0], true, nil
	} else {
		scope.Key, scope.HasKey, scope.Keys = nil, false, keys
	}
	return scope, nil
}
