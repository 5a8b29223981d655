package epk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ErrInvalidDefinition is wrapped by every error about a partition key
// definition (kind, version or paths). The API layer maps it to 400.
var ErrInvalidDefinition = errors.New("invalid partition key definition")

// Partition key kinds, the values of Definition.Kind.
const (
	Hash      = "Hash"      // one path
	MultiHash = "MultiHash" // hierarchical: 2 or 3 paths, version 2
)

// Definition is a container's partitionKey definition, as in the container
// resource: {"paths":["/tenant","/user"],"kind":"MultiHash","version":2}.
//
// Version is 1 or 2. The service treats an absent version as 1; callers that
// decode a container body must apply that default (or choose 2 for new
// containers) before using the definition, because Validate, EPK and
// PrefixRange reject version 0.
type Definition struct {
	Kind    string   `json:"kind"`
	Version int      `json:"version,omitempty"`
	Paths   []string `json:"paths"`
}

// Validate checks the definition: Hash has exactly one path and version 1 or
// 2; MultiHash has 2 or 3 distinct paths and version 2; every path parses
// with ParsePath, and has no whitespace between two names of one segment
// (the service refuses /id ds). Errors wrap ErrInvalidDefinition.
func (d Definition) Validate() error {
	switch d.Kind {
	case Hash:
		if len(d.Paths) != 1 {
			return fmt.Errorf("%w: kind Hash needs exactly 1 path, got %d", ErrInvalidDefinition, len(d.Paths))
		}
		if d.Version != 1 && d.Version != 2 {
			return fmt.Errorf("%w: version must be 1 or 2, got %d", ErrInvalidDefinition, d.Version)
		}
	case MultiHash:
		if len(d.Paths) < 1 || len(d.Paths) > 3 {
			return fmt.Errorf("%w: kind MultiHash needs 1 to 3 paths, got %d", ErrInvalidDefinition, len(d.Paths))
		}
		if d.Version != 2 {
			return fmt.Errorf("%w: kind MultiHash needs version 2, got %d", ErrInvalidDefinition, d.Version)
		}
	default:
		return fmt.Errorf("%w: unsupported kind %q; want Hash or MultiHash", ErrInvalidDefinition, d.Kind)
	}
	seen := make(map[string]bool, len(d.Paths))
	for _, p := range d.Paths {
		segs, err := parsePath(p, true)
		if err != nil {
			return err
		}
		canon := strings.Join(segs, "\x00")
		if seen[canon] {
			return fmt.Errorf("%w: path %q appears twice", ErrInvalidDefinition, p)
		}
		seen[canon] = true
	}
	return nil
}

// SplitPath returns the property names along a partition key path:
// "/a/b" → ["a","b"], `/"a b"/c` → ["a b","c"]. It returns nil if the path
// is invalid; use ParsePath for the reason.
func SplitPath(p string) []string {
	segs, err := ParsePath(p)
	if err != nil {
		return nil
	}
	return segs
}

// ParsePath parses a partition key path. A path is one or more segments,
// each introduced by '/'. A segment is either plain text up to the next '/'
// or a double-quoted JSON string (for names containing '/', spaces or other
// special characters: /"a/b"/c has the segments "a/b" and "c"). Segments
// must be non-empty, and the wildcards * and ? are not allowed. Errors wrap
// ErrInvalidDefinition.
func ParsePath(p string) ([]string, error) {
	return parsePath(p, false)
}

// parsePath is ParsePath; strict, for a new definition, also refuses what
// the service refuses and containers created before kept: whitespace
// between two names in one unquoted segment.
func parsePath(p string, strict bool) ([]string, error) {
	var i int // the position reached, which the message names
	fail := func(why string) ([]string, error) {
		return nil, fmt.Errorf("%w: The partition key component definition path '%s' could not be accepted, failed near position '%d'. Partition key paths must contain only valid characters and not contain a trailing slash or wildcard character. (The path %s.)",
			ErrInvalidDefinition, p, i, why)
	}
	if p == "" {
		return fail("is empty")
	}
	if p[0] != '/' {
		return fail("must start with '/'")
	}
	var segs []string
	for i < len(p) {
		i++ // the '/'
		if i < len(p) && p[i] == '"' {
			end, ok := quotedEnd(p, i)
			if !ok {
				return fail("has an unterminated quoted segment")
			}
			s, err := strconv.Unquote(p[i:end])
			if err != nil {
				return fail("has an invalid quoted segment")
			}
			if s == "" {
				return fail("has an empty segment")
			}
			segs = append(segs, s)
			i = end
			if i < len(p) && p[i] != '/' {
				return fail("has text after a quoted segment")
			}
			continue
		}
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p) - i
		}
		s := p[i : i+j]
		switch {
		case s == "":
			return fail("has an empty segment")
		case s == "*" || s == "?":
			return fail("has a wildcard segment")
		case strings.ContainsRune(s, '"'):
			return fail("has a '\"' inside an unquoted segment")
		}
		if k := nextWord(s); strict && k > 0 {
			// The service reads whitespace as a separator: /id ds is
			// the name id followed by an unexpected ds.
			i += k
			return fail("has two names in one segment; quote a name with spaces: /\"a b\"")
		}
		segs = append(segs, s)
		i += j
	}
	return segs, nil
}

// nextWord returns the index in the unquoted segment s of a name that
// follows whitespace after a first one, or 0 if there is none.
func nextWord(s string) int {
	space := false
	for k, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
		case space && k > 0 && strings.TrimSpace(s[:k]) != "":
			return k
		default:
			space = false
		}
	}
	return 0
}

// quotedEnd returns the index just past the closing quote of the quoted
// string that starts at p[i] == '"'.
func quotedEnd(p string, i int) (int, bool) {
	for j := i + 1; j < len(p); j++ {
		switch p[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}

// EPK returns the effective partition key of the full key k as uppercase
// hex: for Hash version 1 the V1 form, for Hash version 2 the masked V2
// hash, for MultiHash the concatenation of the masked V2 hash of each
// component (32 hex digits per path). k must have exactly len(d.Paths)
// components; a shorter MultiHash prefix is not a full key (see
// PrefixRange). Errors wrap ErrInvalidKey or ErrInvalidDefinition.
func (d Definition) EPK(k Key) (string, error) {
	var buf [128]byte
	b, err := d.AppendEPK(buf[:0], k)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// AppendEPK appends EPK(k) to dst; it does not allocate when dst has room.
func (d Definition) AppendEPK(dst []byte, k Key) ([]byte, error) {
	if len(k) != len(d.Paths) || len(k) == 0 {
		return dst, d.countError(k)
	}
	return d.appendEPK(dst, k)
}

// appendEPK computes the EPK of k, a full key or (for MultiHash) a prefix.
func (d Definition) appendEPK(dst []byte, k Key) ([]byte, error) {
	switch {
	case d.Kind == MultiHash && d.Version == 2:
		return appendMultiHash(dst, k), nil
	case d.Kind == Hash && d.Version == 2:
		return appendV2(dst, k), nil
	case d.Kind == Hash && d.Version == 1:
		return appendV1(dst, k), nil
	}
	return dst, fmt.Errorf("%w: cannot hash with kind %q version %d", ErrInvalidDefinition, d.Kind, d.Version)
}

func (d Definition) countError(k Key) error {
	if len(d.Paths) == 0 {
		return fmt.Errorf("%w: it has no paths", ErrInvalidDefinition)
	}
	return fmt.Errorf("%w: the key %s has %d component(s) but the container's partition key has %d path(s) %s",
		ErrInvalidKey, clipKey(k), len(k), len(d.Paths), strings.Join(d.Paths, ","))
}

func clipKey(k Key) string {
	s := k.String()
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
