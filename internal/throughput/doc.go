// Package throughput is Parsec's request-unit (RU) accounting. It is pure: no
// I/O, no clock.
//
// The cost model interpolates the charges Cosmos DB publishes for point reads
// and default-indexed writes by item size (1 KB read = 1 RU, 1 KB write ≈ 5 RU,
// see cost.go), so that a workload costs here what it would cost there.
package throughput
