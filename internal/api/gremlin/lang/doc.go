// Package lang is the Gremlin traversal language as Parsec receives it: the
// syntax tree of a traversal (ast.go) and the parser of scripts written in
// the gremlin-groovy / gremlin-lang grammar. Both script languages parse with
// one grammar; bytecode requests decode into the same tree in the serializer
// package, so that the evaluator sees one form.
package lang
