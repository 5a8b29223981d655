package jsondoc

import "strings"

// parsePointer splits a JSON Pointer (RFC 6901) such as "/a/b~1c/0" into
// unescaped reference tokens ("a", "b/c", "0"). The empty pointer (the whole
// document) is rejected: patches address members, never the root.
func parsePointer(s string) ([]string, string) {
	if s == "" {
		return nil, "path is empty"
	}
	if s[0] != '/' {
		return nil, "path must start with '/'"
	}
	toks := strings.Split(s[1:], "/")
	for i, t := range toks {
		if strings.IndexByte(t, '~') < 0 {
			continue
		}
		var b strings.Builder
		for j := 0; j < len(t); j++ {
			if t[j] != '~' {
				b.WriteByte(t[j])
				continue
			}
			if j+1 < len(t) && t[j+1] == '0' {
				b.WriteByte('~')
			} else if j+1 < len(t) && t[j+1] == '1' {
				b.WriteByte('/')
			} else {
				return nil, "invalid escape in path (use ~0 for '~' and ~1 for '/')"
			}
			j++
		}
		toks[i] = b.String()
	}
	return toks, ""
}

// arrayIndex parses an array index token: decimal digits without leading
// zeros (RFC 6901). It reports false for anything else, including "-".
// Indexes too large for any document saturate at maxIndex.
func arrayIndex(tok string) (int, bool) {
	if tok == "" || (len(tok) > 1 && tok[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n < maxIndex {
			n = min(n*10+int(c-'0'), maxIndex)
		}
	}
	return n, true
}

const maxIndex = 1 << 30

// hasPrefix reports whether pointer tokens p start with prefix.
func hasPrefix(p, prefix []string) bool {
	if len(prefix) > len(p) {
		return false
	}
	for i := range prefix {
		if p[i] != prefix[i] {
			return false
		}
	}
	return true
}
