// Package cosmos serves the Azure Cosmos DB NoSQL REST protocol over the
// engine, so that the official SDKs work against Parsec unchanged.
//
// It is the layer between HTTP and the engine, which speaks none: it
// authenticates every request with the master-key HMAC scheme (package auth),
// parses paths and headers, calls the engine, and renders results and errors
// in the shapes the SDKs expect, continuation and session tokens included
// (tokens.go). Engine errors are turned into a status, a substatus and a code
// in one function, statusOf (errors.go), and an item operation's success
// status comes from successStatus; writeError renders the JSON
// {"code","message"} body. Handlers return their errors; the router calls
// writeError for them.
//
// Request dispatch follows what the SDKs send (see the protocol reference):
// a POST to a documents feed is a query-plan request, a batch, a query, an
// upsert or a create, decided by headers in that order. One pure function,
// classify, makes that decision for every request: the authorizer refuses
// the read-only key for the operations it marks as writes, and the router
// runs the very operation it returns, so no header can make a request
// authorized as a read run as a write. A request that carries a resource
// token instead of a signature is held to the token's grant from the same
// operation (authorizeGrant, access.go).
package cosmos
