// Package filter is the $filter language of the Table API: a parser from
// the OData text to a small syntax tree, an evaluator of that tree against
// an entity's typed properties, and two analyses that tell the server which
// partitions and key ranges a filter can match. It is a pure core: no I/O,
// no clock, no knowledge of how entities are stored.
//
// # Grammar
//
//	filter     = or
//	or         = and *( "or" and )            ; left-associative
//	and        = unary *( "and" unary )       ; left-associative
//	unary      = "not" unary / "(" or ")" / comparison
//	comparison = operand [ op operand ]       ; a lone operand must be a
//	                                          ; property or true/false
//	op         = "eq" / "ne" / "gt" / "ge" / "lt" / "le"
//	operand    = property / literal
//	literal    = "'" *( char / "''" ) "'"     ; Edm.String, '' is a quote
//	           / ["-"] digits                 ; Edm.Int32 (must fit)
//	           / ["-"] digits ("L" / "l")     ; Edm.Int64
//	           / ["-"] digits ["." digits] [("e"/"E") ["+"/"-"] digits] ["D"/"d"]
//	                                          ; Edm.Double when it has a
//	                                          ; fraction, exponent or D
//	           / "true" / "false"             ; Edm.Boolean
//	           / "datetime'" datetime "'"     ; Edm.DateTime, see edm.ParseDateTime
//	           / "guid'" 8-4-4-4-12 hex "'"   ; Edm.Guid
//	           / ("X" / "binary") "'" *(2hex) "'"  ; Edm.Binary
//	property   = (letter / "_") *(letter / digit / "_")
//
// Precedence, from loosest: or, and, not, comparison. not applies to the
// group or comparison after it, so "not A eq 1" is "not (A eq 1)", as in
// Azurite's parser (QueryParser.ts: UNARY := "not"? GROUP). Tokens are
// separated by any run of spaces (tabs and line breaks are taken too).
//
// Keywords, literal prefixes and property names are case-sensitive: "All
// parts of the filter string are case-sensitive"
// (learn.microsoft.com/rest/api/storageservices/querying-tables-and-entities).
// Azurite accepts AND or Eq; Parsec, like the service, does not.
//
// A comparison has a property on one side and a literal on the other ("it
// is not possible to compare a property to a dynamic value; one side of
// the expression must be a constant", same page); a literal on the left is
// moved to the right with the operator flipped, so '5 lt Age' is Age gt 5.
// A filter must refer to at least one property (Azurite's
// QueryValidator.ts rejects "1 eq 1" alone the same way).
//
// Choices where the service's behaviour is not documented and Azurite is
// no guide (Azurite compares untyped JavaScript values):
//   - An unsuffixed integer outside the Int32 range is an error that
//     suggests the L suffix. OData v3, which the service implements, types
//     an unsuffixed integer as Edm.Int32; WCF Data Services rejected such
//     literals as an unrecognised Edm.Int32 literal.
//   - M (Edm.Decimal) and F (Edm.Single) suffixes are rejected: the Table
//     service has neither type.
//   - null is rejected: the service stores no null properties.
//   - Functions (startswith, substringof, …) are rejected; the service has
//     none (learn.microsoft.com/previous-versions/dd179461).
//
// # Semantics
//
// Eval follows the service: a comparison between values of different EDM
// types matches nothing, not even Int32 with Int64 ("The constant value
// must be of the same data type as the property in order for the filter to
// return valid results"); see edm.Compare for the order within each type.
// A comparison with a property the entity lacks is false whatever the
// operator, ne included; not is plain boolean negation, so not (Missing eq
// 1) is true. A bare property is true when it is an Edm.Boolean true.
//
// # Limits
//
// Limits caps the length of the text, the number of comparisons and the
// nesting depth (which also bounds the height of the tree, so Eval,
// String and the analyses recurse a bounded number of times). Azure Table
// storage allows 15 comparisons (StorageLimits); Cosmos DB's Table API
// documents no cap, and DefaultLimits allows 100. A filter over a limit is
// a *SyntaxError wrapping ErrLimit.
//
// # Key analyses
//
// PartitionKeys and KeyRange are sound over-approximations: every entity
// that Eval accepts has its keys in what they report. They assume every
// entity has string PartitionKey and RowKey, which lets them push not
// through key comparisons.
//
// # Sources
//
//   - learn.microsoft.com/rest/api/storageservices/querying-tables-and-entities
//   - learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model
//   - learn.microsoft.com/previous-versions/dd179461 (operators)
//   - Azurite 3.35.0 src/table/persistence/QueryInterpreter (MIT), run as
//     an oracle for the tests marked "Azurite"
package filter
