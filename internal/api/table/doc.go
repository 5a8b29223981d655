// Package table serves the Azure Table REST protocol over Parsec's engine,
// so that the official Table SDKs (Go aztables, JavaScript
// @azure/data-tables, Python azure-data-tables) work unchanged: a table is
// a container of the database TablesDB partitioned on /PartitionKey, an
// entity an item whose id is its RowKey, and every entity is readable and
// queryable through the NoSQL API too. DESIGN.md holds the mapping and the
// reasons.
//
// The layers, from the request inwards:
//
//   - server.go routes a request by its path, in either URL style: the
//     account in the host name (http://localhost:8902/Tables, the Cosmos
//     DB emulator's Table endpoint) or in the path
//     (http://127.0.0.1:10002/devstoreaccount1/Tables, Azurite's). It
//     writes the common headers and answers every error in the odata.error
//     shape; a handler's panic becomes a 500, never a crash.
//
//   - auth.go hands the credentials to package tableauth (SharedKey,
//     SharedKeyLite, table and account SAS) and checks each operation, and
//     each entity against a SAS's key range, with the grant it returns.
//
//   - entity.go reads an entity's JSON with its @odata.type annotations
//     into typed values (package edm) and enforces the service's limits;
//     storage.go is the stored item (annotated OData JSON); entities.go the
//     single-entity operations, whose conditional forms read the entity and
//     write with the engine etag they read, so that a concurrent change is
//     a 412 (or a bounded retry of a merge) and never a lost update.
//
//   - query.go and filterglue.go run $filter in two steps: a SQL prefilter
//     the engine routes (one logical partition when the filter fixes the
//     PartitionKey), serves from its index and charges in request units,
//     then package filter on each candidate, which keeps the service's
//     type rules exact. The continuation is the engine's query state.
//
//   - batch.go runs an entity group transaction (package batch parses and
//     writes the multipart bodies) as one atomic engine command.
//
//   - errors.go is the one place engine errors become Table errors
//     (throttling: 429 with x-ms-retry-after-ms).
//
// The package is wired into `parsec serve` by package server
// (--table-listen, --table-throughput).
package table
