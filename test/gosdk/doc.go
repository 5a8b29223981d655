// Package gosdk tests Parsec with the official Azure Cosmos DB Go SDK
// (azcosmos v1.5.0) against a real server listening on loopback. A behaviour
// counts as compatible here only when the SDK call succeeds and returns the
// right data.
package gosdk
