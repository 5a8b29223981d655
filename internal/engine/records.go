package engine

import (
	"encoding/json"
	"fmt"

	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

// The catalog's records: a database's and a container's, stored as JSON
// under storage.DatabaseKey and storage.ContainerKey. Their JSON tags are
// the stored format (see doc.go).

// DatabaseInfo is a database's stored record. Its JSON tags are the stored
// format, not a wire format: never rename one.
type DatabaseInfo struct {
	ID           string `json:"id"`
	Rid          string `json:"rid"`
	Ts           int64  `json:"ts"`
	Seq          uint64 `json:"seq"`
	Throughput   int    `json:"throughput,omitempty"`
	AutoscaleMax int    `json:"autoscaleMax,omitempty"`
}

// Etag is the database's quoted etag.
func (d DatabaseInfo) Etag() string { return etagOf(d.Seq) }

// ContainerInfo is a container's stored record. Its JSON tags are the
// stored format, not a wire format: never rename one.
type ContainerInfo struct {
	ID             string                     `json:"id"`
	DB             string                     `json:"db"`
	Rid            string                     `json:"rid"`
	Ts             int64                      `json:"ts"`
	Seq            uint64                     `json:"seq"`
	PartitionKey   epk.Definition             `json:"partitionKey"`
	IndexingPolicy json.RawMessage            `json:"indexingPolicy,omitempty"`
	DefaultTTL     *int64                     `json:"defaultTtl,omitempty"`
	SyntheticKey   string                     `json:"syntheticKey,omitempty"`
	Extra          map[string]json.RawMessage `json:"extra,omitempty"`
	Throughput     int                        `json:"throughput,omitempty"`
	AutoscaleMax   int                        `json:"autoscaleMax,omitempty"`
	// MaxThroughputEver is the highest throughput ever provisioned: the
	// minimum is at least a hundredth of it.
	MaxThroughputEver int `json:"maxThroughputEver,omitempty"`
	// Fixed marks a container created without a partition key.
	Fixed bool `json:"fixed,omitempty"`
	// Ranges is the partition map: contiguous EPK ranges covering ""..."FF".
	Ranges []RangeInfo `json:"ranges"`
	// RangesSeq changes whenever Ranges does; it is the pkranges feed's etag.
	RangesSeq   uint64 `json:"rangesSeq"`
	NextRangeID int    `json:"nextRangeId"`
	// IndexGen is the generation of the index that writes maintain; it
	// changes with the indexing policy. IndexBuilding says that the
	// generation is still being built from the items (see index.go).
	IndexGen      uint32 `json:"indexGen,omitempty"`
	IndexBuilding bool   `json:"indexBuilding,omitempty"`
	// IndexFormat is the index.Format the generation was built with; an
	// index of an older format is rebuilt when the container opens.
	IndexFormat int `json:"indexFormat,omitempty"`
	// TextIndexed lists the full-text index tags whose records every item
	// has (see textindex.go): queries read those instead of the items.
	TextIndexed []uint32 `json:"textIndexed,omitempty"`
	// Replicas are the nodes whose partition groups' members the
	// container's partitions are, chosen when it was created with a
	// replicated catalog (Options.Catalog); empty otherwise.
	Replicas []uint64 `json:"replicas,omitempty"`
}

// Etag is the container's quoted etag.
func (c ContainerInfo) Etag() string { return etagOf(c.Seq) }

// RangeInfo is one physical partition's range in the partition map, as the
// container record stores it (package partition).
type RangeInfo = partition.Range

func (e *Engine) storeDatabase(info DatabaseInfo) error {
	v, _ := json.Marshal(info)
	m := &catalogBatch{seq: info.Seq}
	m.set(storage.DatabaseKey(info.ID), v)
	return e.commitCatalog(m, "store database")
}

func encodeContainer(info ContainerInfo) ([]byte, error) {
	v, err := json.Marshal(info)
	if err != nil {
		// Only an invalid json.RawMessage fails here, and every one is
		// parsed before it is stored. Not a panic: a split encodes the
		// record in a partition loop, which recovers none.
		return nil, internalError("cannot encode the record of container %q: %v", info.ID, err)
	}
	return v, nil
}

func (e *Engine) storeContainer(info ContainerInfo) error {
	m := &catalogBatch{seq: info.Seq}
	if err := setContainer(m, info); err != nil {
		return err
	}
	return e.commitCatalog(m, "store container")
}

// setContainer adds the write of a container record to m.
func setContainer(m *catalogBatch, info ContainerInfo) error {
	v, err := encodeContainer(info)
	if err != nil {
		return err
	}
	m.set(storage.ContainerKey(info.DB, info.ID), v)
	return nil
}

// rekeyed is a catalog record to move from an old key to its current one.
type rekeyed struct{ old, new, value []byte }

// rewriteKeys moves catalog records to their current keys in one durable
// batch: every old key is deleted before any new key is set, so a record
// whose new key is another record's old key survives.
func rewriteKeys(store *storage.DB, recs []rekeyed) error {
	if len(recs) == 0 {
		return nil
	}
	b := store.NewBatch()
	for _, r := range recs {
		if err := b.Delete(r.old); err != nil {
			b.Discard()
			return fmt.Errorf("cannot rewrite catalog keys: %w", err)
		}
	}
	for _, r := range recs {
		if err := b.Set(r.new, r.value); err != nil {
			b.Discard()
			return fmt.Errorf("cannot rewrite catalog keys: %w", err)
		}
	}
	if err := b.Commit(); err != nil {
		return fmt.Errorf("cannot rewrite catalog keys: %w", err)
	}
	return nil
}
