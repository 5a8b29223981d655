// Package parser turns the text of a Cosmos DB NoSQL query into a syntax
// tree. Together with packages token, scanner and ast it is the front end of
// the query engine; it parses and reports syntax errors, nothing more:
// unknown functions, unbound names, non-integer TOP values and the like are
// for the later stages to reject.
//
// # Pipeline
//
//	text ──scanner──▶ []token.Token ──parser──▶ *ast.Query ──▶ eval.Check, exec.Compile
//
// The stages, one package each:
//
//  1. token defines token kinds, keywords and token.Pos (byte offset, line,
//     column; columns count bytes, both 1-based).
//  2. scanner reads the text into tokens, decoding strings and checking
//     numbers. A lexical error is an *Error like any other.
//  3. ast declares the immutable tree, its canonical printer (String), its
//     S-expression form (Tree, Dump), structural equality (Equal) and the
//     precedence table (ast.Prec) the parser and printer share.
//  4. parser (this package) is a hand-written recursive-descent parser with
//     one function per sql.g4 rule. Parse returns the *ast.Query or the first
//     error. It is pure and safe for concurrent use.
//
// Errors are *Error values (an alias of scanner.Error) wrapping ErrSyntax,
// and read
//
//	syntax error at line 1, column 10: expected FROM, WHERE, GROUP BY, ORDER BY, OFFSET or end of query, found "WHER"
//
// The position is that of the first token that cannot be part of a valid
// query. Nesting deeper than MaxDepth is an error too, so that a hostile
// query cannot exhaust the stack.
//
// # The grammar
//
// The reference is sql.g4 in Azure/azure-cosmos-dotnet-v3
// (Microsoft.Azure.Cosmos/src/Query/Core/Parser/sql.g4, as of commit
// b42d1174f "Adds Support for ORDER BY RANK"; line numbers below refer to
// it). The parser follows it rule by rule:
//
//	sql.g4 rule (lines)                                     parser function
//	program (3-5)                                           Parse, program
//	sql_query (7)                                           query
//	select_clause, top_spec, selection,
//	  select_star_spec, select_value_spec,
//	  select_list_spec (12-21)                              selectClause
//	select_item (22)                                        selectItem
//	top_spec, offset_count, limit_count (13, 82-83)         count
//	from_clause, collection_expression (28-33)              fromClause (JOIN), source
//	collection, path_expression (34-43)                     collection
//	where_clause (49), group_by_clause (55),
//	  offset_limit_clause (81)                              query
//	order_by_clause, order_by_item(s), sort_order,
//	  score_expression_order_by_item(s) (61-75)             orderByClause, rankCall
//	scalar_expression (89-94): ?: and ??                    scalar
//	logical_scalar_expression (96-102): AND, OR             or, and
//	in_ / like_scalar_expression, escape_expression,
//	  BETWEEN (93, 104-114)                                 predicate
//	binary_scalar_expression and its operators (116-157)    binary
//	unary_scalar_expression, unary_operator (159-169)       unary
//	primary_expression (171-187), literal (256-263)         primary, operand, subquery, object
//	function_call_scalar_expression (189-193)               call
//	scalar_expression_list (195)                            exprList
//	object_property_list, object_property (197-199)         object
//	identifier (201-206)                                    ident, propertyName
//	K_* keywords (212-246)                                  token.Lookup
//	WS, NUMERIC_LITERAL, STRING_LITERAL, ESC,
//	  LEX_IDENTIFIER, PARAMETER (249-302)                   scanner.Next
//
// # Precedence
//
// In an ANTLR 4 left-recursive rule an earlier alternative binds tighter,
// and binary alternatives are left-associative unless marked
// <assoc=right>. Reading sql.g4 that way gives, loosest first:
//
//	level  operators                  associativity   source
//	 1     ??                         left            scalar_expression alt 2 (91)
//	 2     ? :                        right (*)       scalar_expression alt 1 (90)
//	 3     OR                         left            logical_scalar_expression alt 5 (101)
//	 4     AND                        left            logical_scalar_expression alt 4 (100)
//	 5     [NOT] IN, [NOT] LIKE,      none            in_ / like_scalar_expression (104-110),
//	       [NOT] BETWEEN                              BETWEEN (93) (**)
//	 6     ||                         left            binary_scalar_expression alt 9 (125)
//	 7     |                          left            alt 8 (124)
//	 8     ^                          left            alt 7 (123)
//	 9     &                          left            alt 6 (122)
//	10     = != <>                    left            alt 5 (121); <> is an extension
//	11     < > <= >=                  left            alt 4 (120)
//	12     << >> >>>                  left            extension, placed as in C# and JavaScript
//	13     + -                        left            alt 3 (119)
//	14     * / %                      left            alt 2 (118)
//	15     - + ~ NOT (prefix)         -               unary_scalar_expression (159-169)
//	16     primary: x.y x[y] f(...) literals (...)    primary_expression (171-187)
//
// The operands of IN, LIKE and BETWEEN are binary expressions (level 6 and
// up), and they do not chain. Points worth knowing:
//
//   - NOT is a unary operator as tight as unary minus: NOT a = b is
//     (NOT a) = b; write NOT (a = b).
//   - || (string concatenation) binds looser than every other binary
//     operator, comparisons included: a || b = c is a || (b = c).
//   - Comparisons bind tighter than the bitwise operators, as in C:
//     a = b & c is (a = b) & c.
//   - ?: binds tighter than ??: a ?? b ? c : d is a ?? (b ? c : d), and
//     a ? b : c ?? d is (a ? b : c) ?? d.
//
// (*) The conditional alternative has no <assoc=right>, so ANTLR would make
// a ? b : c ? d : e mean (a ? b : c) ? d : e. The Cosmos DB documentation
// nests it the other way (p.onCloseout ? x : p.onSale ? y : z, with results
// that only the right-associative reading gives), as C# and JavaScript do,
// so it is parsed right-associatively.
//
// (**) In sql.g4 BETWEEN is an alternative of scalar_expression, not of
// logical_scalar_expression, so it cannot be an operand of AND or OR:
// "WHERE c.n BETWEEN 1 AND 10 AND c.s = 'x'" would be a syntax error. Here
// BETWEEN sits beside IN and LIKE, which accepts that query and gives every
// query sql.g4 accepts the same tree.
//
// # Lexical details
//
//   - Keywords are case-insensitive except true, false, null, undefined and
//     udf, which sql.g4 spells in lowercase only (K_TRUE : 'true', 224-244):
//     TRUE and Null are identifiers.
//   - Keywords are reserved: c.value, c.order, c.left or c.rank is an error
//     (identifier, 201-206, admits only ALL, FIRST and LAST among them); write
//     c["value"]. LEFT and RIGHT may only be called, as functions.
//   - Identifiers are [a-zA-Z_][a-zA-Z_0-9]* (LEX_IDENTIFIER, 297), ASCII
//     only; a parameter is '@' followed by one (PARAMETER, 300-302; sql.g4
//     also admits a bare '@', rejected here).
//   - Numbers have no sign: -1 is a unary minus applied to 1, so 1-1 is a
//     subtraction (sql.g4's NUMERIC_LITERAL takes a sign, 266-267, so there
//     1-1 scans as two numbers and fails). Forms: 12, 1.5, 1., .5, 1e3,
//     1.5E-3, and 0x1F hex (an extension the documentation's constants page
//     describes). A number running into a letter (1e, 12ab) is an error, as
//     is one out of float64 range. ast.NumberLit keeps the text as written.
//   - Strings take single or double quotes and the escapes \" \\ \/ \b \f \n
//     \r \t \uXXXX (ESC, 275-281) and also \' (the documentation lists it;
//     sql.g4 does not). Raw control characters U+0000-U+001F, newlines
//     included, are errors (SAFECODEPOINT..., 287-293). A \u surrogate pair
//     decodes to one character; a lone surrogate to U+FFFD.
//   - Whitespace is space, tab, CR and LF (WS, 249-251). "--" starts a
//     comment to the end of the line (an extension; sql.g4 has no
//     comments), so 1--1 is 1 followed by a comment; the printer never
//     writes "--".
//   - <> means != and << >> >>> are the shift operators of the Cosmos DB
//     documentation; sql.g4 has neither.
//   - An object constructor's property name may be a bare identifier
//     ({name: c.n}), as the documentation's <create_object_expression>
//     allows; sql.g4 takes only strings (199).
//
// # Testing
//
// testdata/parse.txt holds the golden cases in the datadriven format
// (github.com/cockroachdb/datadriven): each query or expression with its
// canonical text and tree, or its exact error. Regenerate with
//
//	go test ./internal/query/parser -run TestGolden -rewrite
//
// and review the diff by hand. TestGolden also prints every parsed case
// and parses it again, requiring an equal tree; TestRandomTrees does
// the same for random trees; FuzzParse checks that no input panics and that
// whatever parses round-trips.
package parser
