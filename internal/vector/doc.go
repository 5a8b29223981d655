// Package vector is the pure core of Parsec's vector search: vector
// values and distances, the validation of a container's vector embedding
// policy and vector indexes, and the three index types of the service
// (flat, quantizedFlat, diskANN) as algorithms with no I/O of their own.
// Like package index, it never reads or writes storage: the engine keeps
// the index entries (quantizer, codes, graph nodes) beside the items, in
// the same storage batch, and gives this package small interfaces to read
// them (NodeStore, CodeScan, Fetch). The query layer parses VectorDistance
// and its options and calls the searches; the engine charges request
// units from the returned Stats.
//
// # Values and scores
//
// A vector is a []float32. FromFloat64 turns a JSON array into one,
// checking it against the policy's dimensions and dataType (float32,
// float16 rounded to half precision, int8, uint8). Score computes
// VectorDistance with the service's conventions: cosine similarity (-1 to
// +1) and inner product (dotproduct), where higher is closer, and
// Euclidean distance (0 to +inf), where lower is closer; Better orders
// scores that way (source: learn.microsoft.com/azure/cosmos-db/nosql/query/vectordistance).
// The kernels are plain Go loops unrolled by eight with four accumulators
// (no cgo, no assembly). Internally every index ranks by a lower-is-closer
// distance: squared L2 for euclidean, the negated inner product otherwise,
// with cosine vectors normalized to unit length when stored and queried.
//
// # Policy limits and defaults
//
// From the service's documentation (nosql/vector-search, "Vector indexing
// policies", and the SDKs' VectorIndex reference):
//
//   - flat supports at most 505 dimensions, quantizedFlat and diskANN 4096;
//     embeddings default to 1536 dimensions, cosine, float32.
//   - quantizationByteSize: 1 to min(dimensions, 512), quantizedFlat and
//     diskANN only. The service picks a default itself without documenting
//     it; Parsec uses DefaultQuantizationByteSize (dimensions / 4, at least
//     min(dimensions, 8), at most 512).
//   - indexingSearchListSize: 25 to 500, default 100, diskANN only.
//   - searchListSizeMultiplier: 1 to 100, default 5; Parsec gives
//     quantizedVectorListMultiplier the same range and default.
//   - quantizedFlat and diskANN are used from 1,000 vectors on; below that
//     the service scans (ScanThreshold, UseIndex).
//
// # flat
//
// Exact search: every vector is compared and a bounded heap keeps the best
// k (Flat in memory, Collector for an engine that scans items). Ties are
// broken by id, so results are deterministic.
//
// # quantizedFlat
//
// Product quantization (Jégou, Douze, Schmid, "Product quantization for
// nearest neighbor search", 2011): the dimensions are cut into M =
// quantizationByteSize contiguous subspaces, each with 256 centroids
// learned by k-means (TrainPQ: seeded, at most 10,000 sample vectors and 10
// Lloyd rounds), and a vector is stored as M bytes. A query builds a table
// of its distance to every centroid (M × 256 values), scores every code
// with M lookups, keeps the best k × quantizedVectorListMultiplier
// candidates, and re-ranks them by their exact score from the full
// vectors (QuantizedSearch). A filter is applied to the scan, so filtered
// results are as good as unfiltered ones. The quantizer is data: the
// engine trains it once a partition holds ScanThreshold vectors (it scans
// before that), stores it with MarshalBinary beside the codes, and trains
// a new one when it rebuilds the index (a policy change, a split).
//
// # diskANN
//
// A Vamana proximity graph (Subramanya et al., "DiskANN: Fast Accurate
// Billion-point Nearest Neighbor Search on a Single Node", NeurIPS 2019)
// with FreshDiskANN's incremental updates (Singh et al., 2021):
//
//   - GreedySearch keeps the L closest nodes found, always expanding the
//     closest unexpanded one, and stops when all L are expanded.
//   - Insert searches for the new vector with L = indexingSearchListSize
//     (default 100), chooses its out-neighbours with RobustPrune over the
//     expanded nodes (keep the closest candidate p*, drop every c with
//     α·d(p*, c) ≤ d(p, c), repeat up to R), and adds back edges, pruning
//     a neighbour again only when its degree passes 1.3·R (DiskANN's slack).
//     R = 64 and α = 1.2 by default. α is DiskANN's; the service does not
//     document R, and 64 is Parsec's choice: on clustered data whose
//     clusters have a high intrinsic dimension, R = 32 filled each node's
//     edges with its own cluster and lost the edges between clusters
//     (recall@10 0.91 against 1.00 with R = 64 on 30,000 × 128, BENCHMARKS.md).
//   - Delete repairs the in-neighbours it finds (the deleted node's
//     out-neighbours and the nodes a search for its vector expands) by
//     RobustPrune over their remaining neighbours plus the deleted node's
//     neighbours, and moves the entry point if needed. Edges to deleted
//     nodes that were not found stay and are skipped by searches.
//   - Search uses L = k × searchListSizeMultiplier (default 5).
//   - The graph is built with squared L2 distances (on unit vectors for
//     cosine, which orders like cosine). For dotproduct the graph is an L2
//     graph searched by inner product, which is accurate when norms vary
//     little, as they do for embeddings.
//
// Nodes live in a NodeStore; EncodeNode/DecodeNode give the stable,
// versioned, checksummed bytes the engine stores (see AppendNode), and
// DecodeNode rejects anything else with ErrCorrupt. Rebuild builds a graph
// from a stream of vectors (a policy change); Split divides a graph
// between the children of a partition split, keeping edges inside each
// child, re-pruning nodes that lost edges over their two-hop neighbours in
// the same child, and reconnecting whatever a child cannot reach from its
// entry point.
//
// # Filters and filterPriority
//
// Every search takes a Filter (the WHERE clause, or a logical
// partition). flat and quantizedFlat apply it while scanning. diskANN
// walks the graph through every node but returns only those that pass;
// when the filter rejects some of the nodes compared, the search runs
// again with its list divided by the fraction accepted, then doubles it
// while fewer than k results were found (up to 16,384), so that selective
// filters keep their recall at the cost of more nodes visited (reported in
// Stats). The service documents filterPriority (0.0 to 1.0) only as the
// weight of the WHERE filter against the vector search in DiskANN;
// Parsec validates it and always gives the filter full priority in this
// sense (results always pass the filter, and the list widens for it), so
// the option does not change Parsec's answers.
//
// # Concurrency
//
// Flat, Quantized and MemStore are not safe for concurrent use. A PQ is
// immutable. A Graph's writes must be serialized by the caller; its
// searches only read the store.
package vector
