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
//	           / ["-"] digits                 ; Edm.Int32, or Edm.Int64 if
//	                                          ; it does not fit an Int32
//	           / ["-"] digits ("L" / "l")     ; Edm.Int64
//	           / ["-"] digits ["." digits] [("e"/"E") ["+"/"-"] digits] ["D"/"d"]
//	                                          ; Edm.Double when it has a
//	                                          ; fraction, exponent or D
//	           / ("NaN" / "INF" / "-INF") ["D"/"d"]  ; Edm.Double specials
//	           / "true" / "false"             ; Edm.Boolean
//	           / "datetime'" datetime "'"     ; Edm.DateTime, see edm.ParseDateTime
//	           / "guid'" 8-4-4-4-12 hex "'"   ; Edm.Guid
//	           / ("X" / "binary") "'" *(2hex) "'"  ; Edm.Binary
//	property   = (letter / "_") *(letter / digit / "_")   ; at most 255
//
// Literal types follow OData v3, the protocol version of the service, and
// the legacy .NET SDK shows the service needs them exact: its
// TableQuery.GenerateFilterCondition writes an Int64 with an L suffix and a
// whole Double with ".0" (Microsoft.Azure.Cosmos.Table and
// WindowsAzure.Storage, TableQuery.cs).
//
// Precedence, from loosest: or, and, not, comparison. not applies to the
// group or comparison after it, so "not A eq 1" is "not (A eq 1)", as in
// Azurite's parser (QueryParser.ts: UNARY := "not"? GROUP). Tokens are
// separated by any run of spaces (tabs and line breaks are taken too).
//
// Keywords (and, or, not, eq … le, true, false) and property names are
// case-sensitive: "All parts of the filter string are case-sensitive"
// (learn.microsoft.com/rest/api/storageservices/querying-tables-and-entities).
// Azurite 3.35.0 accepts AND and EQ; Parsec, like the documentation, does
// not. The literal prefixes datetime, guid, binary and X are the
// exception: they are matched without regard to case, as WCF Data
// Services (the service's original OData stack) and Azurite do.
//
// A comparison has a property on one side and a literal on the other ("it
// is not possible to compare a property to a dynamic value; one side of
// the expression must be a constant", same page); a literal on the left is
// moved to the right with the operator flipped, so '5 lt Age' is Age gt 5.
// A comparison of two literals ("1 eq 1") is rejected, as Azurite does. A
// lone true or false is a filter: the service accepts $filter=false
// (Azure/Azurite#1573, which made Azurite accept it too), while a lone
// literal of another type gets the service's "The $filter expression must
// evaluate to a single boolean value" (Azure/Azurite#1185).
//
// Choices where the service's behaviour is not documented and Azurite is
// no guide (Azurite compares untyped JavaScript values):
//   - An unsuffixed integer outside the Int32 range is an Int64 (an error
//     beyond Int64), as ODataLib types integer literals. Python's
//     azure-data-tables sends integers of up to 32 bits unsuffixed, so
//     2147483648..4294967295 arrive without an L; Azurite accepts them too.
//   - M (Edm.Decimal) and F (Edm.Single) suffixes are rejected: the Table
//     service has neither type.
//   - null is rejected: the service stores no null properties.
//   - Functions (startswith, substringof, …) are rejected; the service has
//     none (learn.microsoft.com/previous-versions/dd179461).
//
// Errors are *SyntaxError values with a byte offset. The server answers
// them with 400 and the code InvalidInput; the service's own message is
// "One of the request inputs is not valid." (Azure/Azurite#2471 quotes it
// for "myCol eq null"), and Azurite's is "The query condition specified in
// the request is invalid.".
//
// # Semantics
//
// Eval follows the service: a comparison between values of different EDM
// types matches nothing, not even Int32 with Int64 ("The constant value
// must be of the same data type as the property in order for the filter to
// return valid results"); see edm.Compare for the order within each type.
// A comparison with a property the entity lacks is false whatever the
// operator, ne included; not is plain boolean negation, so not (Missing eq
// 1) is true (both checked on Azurite). A bare property is true when it is
// an Edm.Boolean true. Between Doubles, NaN makes every comparison false
// except ne; this is .NET's and IEEE's rule, not checked against the
// service.
//
// String prints a tree back as a filter that parses to an equal tree:
// literals in canonical form (datetime with seven fractional digits and Z,
// guid in lower case, binary as X'…' in lower-case hex) and only the
// parentheses the tree needs, with not written before its operand.
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
// through key comparisons. KeyRange's bounds are in UTF-16 order, the
// order of the $filter; Interval.ByteBounds widens them for a store that
// orders keys by their UTF-8 bytes.
//
// # Sources
//
//   - learn.microsoft.com/rest/api/storageservices/querying-tables-and-entities
//   - learn.microsoft.com/rest/api/storageservices/understanding-the-table-service-data-model
//   - learn.microsoft.com/previous-versions/dd179461 (operators)
//   - Azurite 3.35.0 src/table/persistence/QueryInterpreter (MIT), run as
//     an oracle for the tests marked "Azurite"
package filter
