// Package tableauth authenticates and authorizes Table API requests the way
// Azure Table storage does: SharedKey and SharedKeyLite signatures in the
// Authorization header, and shared access signatures (a table SAS or an
// account SAS) in the query string.
//
// It is shaped as two steps so that the server stays the only place that
// knows what a request does:
//
//  1. Verifier.Verify(r, account, keys) checks that the request is genuine
//     (a signature made with one of the account's keys: the full key or the
//     read-only key) and in time, and returns a Grant.
//  2. Grant.Allow(action, table) and Grant.AllowEntity(action, table, pk, rk)
//     check that what the server is about to do is within the grant: a
//     read-only key reads only, a table SAS reaches one table, its signed
//     permissions and its PartitionKey/RowKey range, an account SAS its
//     signed resource types and permissions. A batch is checked operation
//     by operation with the outer request's grant.
//
// The canonicalized resource of SharedKey(Lite) is "/" + account + the
// escaped path as sent (+ "?comp=" when present), so both URL styles need
// no special case: host-style http://acct.host/Tables signs "/acct/Tables",
// path-style http://127.0.0.1:PORT/acct/Tables signs "/acct/acct/Tables".
// The server passes the account it resolved from the URL.
//
// Every refusal is an *Error with the service's status (403) and code
// (AuthenticationFailed for anything wrong with the signature or its time
// window, AuthorizationPermissionMismatch, AuthorizationSourceIPMismatch,
// AuthorizationProtocolMismatch, AuthorizationServiceMismatch,
// AuthorizationResourceTypeMismatch, AuthorizationFailure for another
// table or an entity outside the key range), wrapping one sentinel per
// reason. Signatures are compared in constant time. The clock is injected
// (Verifier.Now). Stored access policies (si) are refused with
// ErrStoredPolicy: Parsec keeps no table ACLs.
//
// Sources: learn.microsoft.com/rest/api/storageservices/authorize-with-shared-key,
// create-service-sas and create-account-sas; Azurite
// src/table/authentication/*; the signing code of the Go, JavaScript and
// Python SDKs.
package tableauth
