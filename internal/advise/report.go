package advise

import "github.com/parsecdb/parsec/internal/epk"

// Report is the result of Analyze. Its JSON form is what `parsec advise
// --json` prints; every field is described in the package documentation.
type Report struct {
	Source            Source            `json:"source"`
	Partitions        int               `json:"partitions"`
	PartitionsFrom    string            `json:"partitionsFrom"`
	Throughput        float64           `json:"throughput"`
	ThroughputAssumed bool              `json:"throughputAssumed"`
	PartitionBudgetRU float64           `json:"partitionBudgetRU"`
	WriteRate         float64           `json:"writeRate"`
	WriteRateFrom     string            `json:"writeRateFrom"`
	AvgWriteRU        float64           `json:"avgWriteRU"`
	AvgReadRU         float64           `json:"avgReadRU"`
	Growth            GrowthInfo        `json:"growth"`
	CurrentWindow     Window            `json:"currentWindow"`
	Workload          []Operation       `json:"workload,omitempty"`
	Observed          []ObservedRange   `json:"observed,omitempty"`
	Candidates        []CandidateReport `json:"candidates"`
	Warnings          []string          `json:"warnings,omitempty"`
}

// Source describes the documents analyzed.
type Source struct {
	Name             string  `json:"name"`
	Live             bool    `json:"live"`
	Documents        int     `json:"documents"`
	Bytes            int64   `json:"bytes"`
	AvgDocumentBytes float64 `json:"avgDocumentBytes"`
	WithTimestamp    int     `json:"withTimestamp"`
	FirstTs          int64   `json:"firstTs,omitempty"`
	LastTs           int64   `json:"lastTs,omitempty"`
	SpanDays         float64 `json:"spanDays"`
}

// GrowthInfo is the growth rate used for the 20 GB projection.
type GrowthInfo struct {
	DocumentsPerDay float64 `json:"documentsPerDay"`
	BytesPerDay     float64 `json:"bytesPerDay"`
	From            string  `json:"from"` // "--growth", "timestamps" or "none"
}

// Window is the "current writes" window: the most recent documents in
// insertion order.
type Window struct {
	Documents  int     `json:"documents"`
	FirstIndex int     `json:"firstIndex"`
	Rule       string  `json:"rule"`
	SpanDays   float64 `json:"spanDays,omitempty"`
}

// ObservedRange is one physical partition of a live container as the
// server's telemetry reports it.
type ObservedRange struct {
	ID          string      `json:"id"`
	Min         string      `json:"minInclusive"`
	Max         string      `json:"maxExclusive"`
	BudgetRU    float64     `json:"budgetRU"`
	ConsumedRU  float64     `json:"consumedRU"`
	Throttled   uint64      `json:"throttled"`
	Bytes       int64       `json:"storageBytes"`
	Items       int64       `json:"itemCount"`
	TopKeysByRU []KeyWeight `json:"topKeysByRU,omitempty"`
}

// KeyWeight is a key with a weight (request units or bytes).
type KeyWeight struct {
	Key    string  `json:"key"`
	Weight float64 `json:"weight"`
}

// CandidateReport is everything computed for one candidate key.
type CandidateReport struct {
	Key                   string          `json:"key"`
	Rank                  int             `json:"rank"`
	Canonical             string          `json:"canonical"`
	Kind                  string          `json:"kind"` // path, hierarchical, synthetic
	Current               bool            `json:"current,omitempty"`
	Proposed              string          `json:"proposed,omitempty"`
	Definition            epk.Definition  `json:"partitionKeyDefinition"`
	RandomSuffix          *RandomSuffix   `json:"randomSuffix,omitempty"`
	DistinctValues        int             `json:"distinctValues"`
	UndefinedItems        int             `json:"undefinedItems"`
	FailedItems           int             `json:"failedItems"`
	FailedExample         string          `json:"failedExample,omitempty"`
	Monotonic             bool            `json:"monotonic"`
	Monotonicity          float64         `json:"monotonicity"`
	HottestPartitionShare float64         `json:"hottestPartitionShare"`
	CurrentWrites         CurrentWrites   `json:"currentWrites"`
	Partitions            []PartitionStat `json:"partitionStats"`
	StorageSkew           Skew            `json:"storageSkew"`
	RUSkew                Skew            `json:"ruSkew"`
	Throttle              Throttle        `json:"throttle"`
	LogicalLimit          LogicalLimit    `json:"logicalLimit"`
	Queries               *Queries        `json:"queries,omitempty"`
	TopKeysByItems        []KeyStat       `json:"topKeysByItems"`
	TopKeysByBytes        []KeyStat       `json:"topKeysByBytes"`
	TopKeysByLoad         []KeyStat       `json:"topKeysByLoad"`
	KeyFrequency          KeyFrequency    `json:"keyFrequency"`
	Problems              []string        `json:"problems"`
	Reasons               []string        `json:"reasons"`
	Summary               string          `json:"summary"`
}

// RandomSuffix is the random(lo, hi) part of a candidate.
type RandomSuffix struct {
	Lo   int `json:"lo"`
	Hi   int `json:"hi"`
	Keys int `json:"keys"`
}

// CurrentWrites is how the current window's documents fall on keys and
// partitions.
type CurrentWrites struct {
	Documents             int     `json:"documents"`
	DistinctKeys          int     `json:"distinctKeys"`
	HottestKey            string  `json:"hottestKey"`
	HottestKeyShare       float64 `json:"hottestKeyShare"`
	HottestPartition      string  `json:"hottestPartition"`
	HottestPartitionIndex int     `json:"hottestPartitionIndex"` // 1-based position in key order
	HottestPartitionShare float64 `json:"hottestPartitionShare"`
	PartitionsWritten     int     `json:"partitionsWritten"`
	EvenShareLimit        float64 `json:"evenShareLimit"`
}

// PartitionStat is one physical partition under a candidate.
type PartitionStat struct {
	ID                string  `json:"id"`
	Min               string  `json:"minInclusive"`
	Max               string  `json:"maxExclusive"`
	Items             int     `json:"items"`
	Bytes             int64   `json:"bytes"`
	StorageShare      float64 `json:"storageShare"`
	LogicalPartitions int     `json:"logicalPartitions"`
	CurrentWrites     int     `json:"currentWrites"`
	CurrentWriteShare float64 `json:"currentWriteShare"`
	RU                float64 `json:"ru"`
	RUShare           float64 `json:"ruShare"`
	ObservedRU        float64 `json:"observedRU,omitempty"`
	ObservedThrottled uint64  `json:"observedThrottled,omitempty"`
}

// Skew summarizes how unevenly a quantity falls on partitions.
type Skew struct {
	MaxOverMean float64 `json:"maxOverMean"`
	Gini        float64 `json:"gini"`
}

// Throttle is the 429 projection.
type Throttle struct {
	Risk                string  `json:"risk"` // none, low, medium, high, unknown
	HottestPartitionRU  float64 `json:"hottestPartitionRU"`
	BudgetRU            float64 `json:"budgetRU"`
	Utilization         float64 `json:"utilization"`
	MaxWriteRate        float64 `json:"maxWriteRate"`
	EvenMaxWriteRate    float64 `json:"evenMaxWriteRate"`
	HottestKeyRU        float64 `json:"hottestKeyRU"`
	HotKeyMaxWriteRate  float64 `json:"hotKeyMaxWriteRate"`
	HotKeyOverPartition bool    `json:"hotKeyOverPartition"`
}

// LogicalLimit is the 20 GB projection.
type LogicalLimit struct {
	LimitBytes        int64    `json:"limitBytes"`
	LargestKey        string   `json:"largestKey"`
	LargestKeyBytes   int64    `json:"largestKeyBytes"`
	LargestKeyShare   float64  `json:"largestKeyShare"`
	DaysTo20GB        *float64 `json:"daysTo20GB"`
	FirstKeyTo20GB    string   `json:"firstKeyTo20GB,omitempty"`
	KeyLifetimeDays   float64  `json:"keyLifetimeDays,omitempty"`
	ProjectedMaxBytes float64  `json:"projectedMaxKeyBytes,omitempty"`
	Risk              string   `json:"risk"` // none, medium, high, now, unknown
}

// Queries is how the workload's operations route under a candidate.
type Queries struct {
	SinglePartitionShare float64   `json:"singlePartitionShare"`
	FanOutShare          float64   `json:"fanOutShare"`
	FanOutRU             float64   `json:"fanOutRU"`
	Operations           []OpRoute `json:"operations"`
}

// OpRoute is one workload operation under a candidate.
type OpRoute struct {
	Name              string  `json:"name"`
	Op                string  `json:"op"`
	Rate              float64 `json:"rate"`
	Routing           string  `json:"routing"` // single, keys, prefix, all
	Keys              int     `json:"keys,omitempty"`
	PartitionsTouched float64 `json:"partitionsTouched"`
	RU                float64 `json:"ru"`
	FanOutRU          float64 `json:"fanOutRU"`
	Note              string  `json:"note,omitempty"`
}

// KeyStat is one logical partition.
type KeyStat struct {
	Key           string  `json:"key"`
	Items         int     `json:"items"`
	Bytes         int64   `json:"bytes"`
	CurrentWrites int     `json:"currentWrites"`
	LoadRU        float64 `json:"loadRU"`
	Partition     string  `json:"partition"`
}

// KeyFrequency is the item count of the most frequent keys, most frequent
// first, and what the rest hold.
type KeyFrequency struct {
	Top         []int `json:"top"`
	OthersKeys  int   `json:"othersKeys"`
	OthersItems int   `json:"othersItems"`
}
