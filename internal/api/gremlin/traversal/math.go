package traversal

import "github.com/parsecdb/parsec/internal/api/gremlin/lang"

func buildMath(c *compiler, st lang.Step, mods []lang.Step) (*op, error) {
	return nil, unsupported(st.Name, "math() is not supported yet")
}
