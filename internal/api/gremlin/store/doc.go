// Package store is the graph.Store of Parsec's Gremlin API: it keeps a
// graph's vertices and edges as items of a partitioned engine container, in
// the document shape Azure Cosmos DB's graph uses, so that the same
// container reads the same through the NoSQL API and the graph stays
// portable between the two.
//
// # The document shape
//
// The shape is Cosmos DB's ("Azure Cosmos DB Graph database backend JSON
// format", github.com/LuisBosquez/azure-cosmos-db-graph-working-guides,
// graph-backend-json.md, and the graph bulk executor's documents,
// github.com/Azure/azure-cosmos-graph-bulk-executor). A vertex is an item
//
//	{"id": "marko", "label": "person", "pk": "p1",
//	 "name": [{"id": "<guid>", "_value": "marko"}],
//	 "place": [{"id": "<guid>", "_value": "santa fe", "_meta": {"startTime": 2005}},
//	           {"id": "<guid>", "_value": "brussels"}]}
//
// Every property is a list of values (a "property bag"), each with its own
// id (a GUID, given here when the vertex property has none) and its
// meta-properties in "_meta". The partition key property ("pk" in a
// container partitioned on /pk) is stored flat, as the item's partition
// key; a read returns it as a property too, with the id "<vertex id>|pk",
// as Cosmos DB answers. A flat member other than the key (the bulk
// importer's "flat properties", or a document written through the NoSQL
// API) reads as a property of one value with the id "<vertex id>|<key>".
//
// An edge is an item in its source (out) vertex's logical partition:
//
//	{"id": "e1", "label": "knows", "_isEdge": true,
//	 "_vertexId": "marko", "_vertexLabel": "person",
//	 "_sink": "vadas", "_sinkLabel": "person", "_sinkPartition": "p2",
//	 "pk": "p1", "weight": 0.5}
//
// The source's partition key is the edge's, and edge properties are flat
// (single) values. Property values are strings, numbers or booleans, as on
// Cosmos DB; a number is read back as an int64 when it is an integer
// (written without a fraction) and as a float64 otherwise; whole floats
// are written with a fraction (2.0) so that they read back as floats. The
// engine keeps an item's text as written, and point reads return it so,
// but its query path re-encodes numbers by value (2.0 as 2); so a
// document holding a whole float in a property or meta-property value
// ends with the marker "_wholeFloats": true, and a query row with it is
// read again by key (one point read more, for those documents only). A
// document written through the NoSQL API with a whole float and without
// the marker reads that number as an integer when a query finds it. The
// names id, label, _isEdge, _vertexId, _vertexLabel, _sink, _sinkLabel,
// _sinkPartition, _wholeFloats and the engine's system properties (_rid,
// _self, _etag, _attachments, _ts) are not property keys, and an edge property cannot
// take the partition key's name. Containers partitioned on /id or /label,
// on a nested path, or on several paths (hierarchical keys) are refused by
// New. A document written through another API is read as a vertex unless
// it has "_isEdge": true.
//
// # Routing
//
// Vertices named by reference (VertexQuery.Refs: the far ends of edges,
// g.V([pk, id])) are point reads, each in its own logical partition (a
// reference without a key: its id queried across partitions). Vertices
// with ids and partition keys are point reads of each (key, id)
// combination, one logical partition each. With partition keys only, each logical partition is
// queried. Otherwise one query reads every partition: the conditions on
// top-level values (id, label, the partition key) are SQL filters the
// engine serves from its index; a condition on a vertex property is
//
//	(EXISTS(SELECT VALUE p FROM p IN c["name"] WHERE p._value = @p0) OR c["name"] = @p1)
//
// (the second term for flat values), which the engine evaluates on each
// document it reads, since its index does not hold array elements
// (package index). Vertices exclude edges with
// (NOT IS_DEFINED(c._isEdge) OR c._isEdge = false). Ids without partition
// keys are one query over every partition (an id may name a vertex in
// each logical partition: ids are unique per logical partition only).
//
// Out edges are queried in each source vertex's logical partition by
// _vertexId (a source without a partition key is looked for in every
// partition); in edges by _sink across partitions, through the index, and
// then kept only where _sinkPartition is the target's key (ids are unique
// per logical partition only). Edge properties are top-level, so every
// edge condition is served by the index. g.E() queries every partition.
//
// The id conditions come first in the SQL: the engine tries the index of
// each equality in the order written and reads later ones only up to the
// entries of the best so far, so that _isEdge (true of every edge) or a
// common label does not cost a read of its whole index.
//
// Predicates are translated to SQL only where SQL selects at least what
// Gremlin does (eq, comparisons, inside, outside, between, within, and the
// positive text predicates); negations (neq, without, not..., not) are
// sent as existence only, since the query language's != is undefined
// between kinds where Gremlin's neq is true. Every element read is tested
// again here with Gremlin's semantics, which decide.
//
// # Writes
//
// Apply groups the writes by logical partition and commits each group as
// one transactional batch of the engine (engine.Command with Atomic):
// creates (a taken id is the engine's conflict error), replaces that carry
// the etag of the version this store read, and deletes. A group of more
// than engine.MaxBatchOps (100) operations is committed as several
// batches: each atomic, the group as a whole not — a failure in a later
// batch leaves the earlier ones written, and is reported as a
// PartialWriteError. Dropping a vertex deletes its out edges (in its
// partition) in its batch, and its in edges, which live with their
// sources in other partitions, after every group has committed; a failure
// there is a PartialWriteError too, and leaves edges whose target is gone.
// Edges created by the same Apply before a drop of one of their vertices
// are deleted with it. PartialWriteError.Written counts the mutations all
// of whose writes committed; they are not necessarily the first ones
// given, since the writes are ordered by partition. Apply fills in the
// ids it gives (vertices, edges and vertex properties written without
// one, as Cosmos DB gives GUIDs) and a vertex's default label "vertex"
// in the mutations' elements, so that the caller returns what was stored.
//
// # Accounting
//
// Each call returns a graph.StoreOp: the partitions (key ranges) it
// touched, the elements it returned (for Apply: the items it wrote), the
// bytes read (for Apply also the bytes written), the request charge
// summed from the engine's charges (for Apply including the queries that
// found the edges of dropped vertices), and the index paths the engine's
// queries used, comma separated ("/_sink/?").
//
// # Bounds
//
// A read fails with ErrTooManyElements past Options.MaxElements elements
// (a VertexQuery or EdgeQuery Limit stops it earlier, without error), and
// so does an Apply whose dropped vertices have more edges than that. Id
// lists are queried InBatch at a time; predicates nest at most 32 deep;
// regexes are at most 4 KiB (Go's RE2, linear time). The engine's errors are
// wrapped with %w, so errors.As finds *engine.ThrottledError (429, with
// its RetryAfter) and errors.Is the engine's sentinels.
package store
