package mql

import "go.mongodb.org/mongo-driver/v2/bson"

// LookupFunc returns all documents of another collection of the same database; $lookup uses it.
type LookupFunc func(collection string) ([]bson.D, error)

// Pipeline is a parsed aggregation pipeline. It is immutable and safe for concurrent use; Run may be
// called many times.
type Pipeline struct {
}

// ParsePipeline parses aggregation stages: $match $project $addFields/$set $unset $group $sort $skip
// $limit $count $unwind $lookup (localField/foreignField) $replaceRoot, with the accumulators $sum $avg
// $min $max $first $last $push $addToSet $count and the expression operators they need. lookup serves
// $lookup and may be nil when the pipeline has none.
func ParsePipeline(stages []bson.D, lookup LookupFunc) (*Pipeline, error) {
	return nil, notImplemented("ParsePipeline")
}

// LeadingMatch returns the filter of a leading $match stage, or nil if the pipeline does not start
// with one, so a caller can push it down to an index or a partition.
func (p *Pipeline) LeadingMatch() *Filter {
	return nil
}

// Run runs the pipeline over docs and returns the result. It fails with code 292
// (QueryExceededMemoryLimitNoDiskUseAllowed) when a blocking stage ($group, $sort) would buffer more
// than 100 MB.
func (p *Pipeline) Run(docs []bson.D) ([]bson.D, error) {
	return nil, notImplemented("Pipeline.Run")
}

// maxBuffered bounds the state a pipeline buffers (and any single value it builds), in bytes.
const maxBuffered = 100 << 20
