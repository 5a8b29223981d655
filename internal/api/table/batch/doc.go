// Package batch reads and writes the entity group transactions of the
// Table API: POST /$batch with a multipart/mixed body holding one
// changeset, itself multipart/mixed, whose parts are embedded HTTP
// requests (Content-Type: application/http, Content-Transfer-Encoding:
// binary).
//
//	--batch_<id>
//	Content-Type: multipart/mixed; boundary=changeset_<id>
//
//	--changeset_<id>
//	Content-Type: application/http
//	Content-Transfer-Encoding: binary
//
//	POST http://host/acct/t HTTP/1.1
//	Content-Type: application/json
//	Prefer: return-no-content
//
//	{"PartitionKey":"p","RowKey":"r"}
//	--changeset_<id>--
//	--batch_<id>--
//
// The package is pure: Parse turns a request body into Operations, and
// WriteResponse turns the server's answers into the response body. It
// knows nothing of tables or entities; the server routes each Operation as
// it would a top-level request and enforces the transaction's rules (one
// partition key, no entity twice, all or nothing).
//
// Parse accepts what the three SDKs send, which differ: the Go SDK
// (aztables transactional_batch.go) writes CRLF through mime/multipart and
// sorts sub-request headers; the JavaScript SDK (@azure/data-tables
// TablePolicies.js) puts an empty line after the batch part's headers and
// an extra empty line before every sub-request body; the Python SDK
// (azure-core multipart) numbers parts with a MIME Content-ID header and
// adds Content-Length. Lines may end in LF alone. The testdata directory
// holds bodies captured from the JavaScript and Python SDKs.
//
// Limits are the service's (100 operations per changeset, 4 MiB body) plus
// header caps. Every Parse error is an *Error with the service's code and
// status; Error.InChangeset says whether the service reports it as a plain
// error response or, like operation failures, as a 202 batch response
// holding one FailurePart whose message starts with the failing index.
//
// How the SDKs read a failure: Python raises TableTransactionError with
// index = the number before the message's first ':' and the odata.error
// code; JavaScript throws a RestError with the sub-response's status, code
// and message; Go (aztables) returns an *azcore.ResponseError of the outer
// 202 response, whose ErrorCode azcore takes only from an x-ms-error-code
// header (the body is multipart), so a server that wants Go callers to see
// the code sets that header on the outer response as well.
package batch
