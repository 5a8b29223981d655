// Package tables tests Parsec's Table API with the official Go SDK,
// aztables, against a real server started in-process: both URL styles
// (the account in the host name, as the Cosmos DB emulator's
// http://localhost:8902/, and in the path, as Azurite's), both signing
// schemes, every entity and table operation, batches, the EDM types, the
// read-only key, the NoSQL API's view of the same data, and throttling.
package tables
