// Package auth signs and verifies Cosmos DB master-key requests. It is pure:
// the clock is an argument (CheckDate) and nothing does I/O.
//
// # The scheme
//
// A client holding the base64 master key signs each request:
//
//	key          = base64-decode(masterKey)                        (DecodeKey)
//	stringToSign = lower(verb) \n lower(resourceType) \n resourceLink \n lower(x-ms-date) \n \n
//	sig          = base64(HMAC-SHA256(key, stringToSign))          (Sign)
//	Authorization: urlencode("type=master&ver=1.0&sig=" + sig)    (Header)
//
// resourceType is the path segment of the addressed resource ("dbs",
// "colls", "docs", "offers", ..., "" for the account) and resourceLink the
// percent-decoded path without its outer slashes, case preserved: the parent
// link for a feed or create (POST /dbs/d/colls/c/docs signs "docs",
// "dbs/d/colls/c"), the full link for an item. Resource derives both from a
// request path with the server rule (odd segment count: the last segment is
// the type; even: the link is the whole path and the type is the
// second-last segment). Rid-based links (anything not under "dbs/", in
// practice offers) are lower-cased, as both SDKs sign them.
//
// # Server duties
//
// For every request the server:
//  1. takes the date from x-ms-date (or Date) and calls CheckDate with its
//     clock and allowed skew (the service allows 15 minutes); a date parsed
//     earlier is checked again with CheckTime, which compares instants so
//     that dates centuries away (the year 2400 or 9999) are refused;
//  2. computes (resourceType, resourceLink) with Resource(r.URL.Path);
//  3. calls Verifier.Verify with the method, those two, the date and the
//     Authorization header, and gets ReadWrite (primary key), ReadOnly
//     (read-only key: reject writes) or an error.
//
// Verifier.VerifyKey checks a bearer credential instead: the base64 key
// itself, compared in constant time, for clients such as a Prometheus
// scraper that cannot sign each request.
//
// # Resource tokens
//
// A permission's token is minted by the server, not signed by the client:
// MintResourceToken encodes a Grant (what the permission covers, its
// version, the expiry) and appends an HMAC-SHA256 of it under a key derived
// from the primary key. Authenticate accepts such a token in place of a
// master-key signature: it checks the MAC in constant time and the expiry
// against the clock it is given, and returns the Grant, which the caller
// holds the request to (and checks the permission still exists). The date
// is not part of a resource token.
//
// # Errors
//
// Every error maps to 401 Unauthorized (an expired or forged resource
// token, and a date outside the skew window too:
// the server answers it like a bad signature); the message of an
// ErrBadSignature error quotes the payload the server signed, as the service
// does.
package auth
