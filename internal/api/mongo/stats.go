package mongo

import (
	"crypto/sha256"
	"errors"
	"os"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
)

// Statistics and maintenance commands, answered from what Parsec's engine
// knows: a container's item count and stored bytes (Container.Usage). The
// engine indexes every path without per-index structures, so index sizes
// are 0; storage is compacted by the engine in the background, so compact
// frees nothing.

// collUUID is the collection's UUID in listCollections: derived from its
// container's rid, so it is stable while the collection exists and new
// when a collection of the same name is created again.
func collUUID(info engine.ContainerInfo) bson.Binary {
	sum := sha256.Sum256([]byte(info.DB + "\x00" + info.ID + "\x00" + info.Rid))
	u := sum[:16]
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return bson.Binary{Subtype: bson.TypeBinaryUUID, Data: u}
}

// scaleOf reads the scale option of the statistics commands (default 1).
func (r *request) scaleOf(v any, present bool) (int64, error) {
	if !present || v == nil {
		return 1, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, typeMismatch("BSON field '%s.scale' is the wrong type '%s', expected a number", r.name, typeName(v))
	}
	if n < 1 {
		return 0, badValue("BSON field 'scale' value must be >= 1, actual value '%d'", n)
	}
	return n, nil
}

// storageStatsScale reads $collStats' storageStats.scale, which mongod
// parses with an IDL validator (document_source_coll_stats.idl): 14 for
// another type than a number, 51024 below 1.
func storageStatsScale(v any, present bool) (int64, error) {
	if !present || v == nil {
		return 1, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, typeMismatch("BSON field '$collStats.storageStats.scale' is the wrong type '%s', expected types '[long, int, decimal, double']", typeName(v))
	}
	if n < 1 {
		return 0, newErr(51024, "Location51024", "BSON field 'scale' value must be >= 1, actual value '%d'", n)
	}
	return n, nil
}

// collStats is collStats' reply, and $collStats' storageStats, for the
// collection name of the request's database: zeros for a missing one, as
// MongoDB answers.
func (r *request) collStats(name string, scale int64) (bson.D, error) {
	ns := r.db + "." + name
	col, err := r.s.openColl(r.db, name)
	if isNotFound(err) {
		return bson.D{{Key: "ns", Value: ns}, {Key: "size", Value: int64(0)}, {Key: "count", Value: int64(0)},
			{Key: "storageSize", Value: int64(0)}, {Key: "totalIndexSize", Value: int64(0)}, {Key: "totalSize", Value: int64(0)},
			{Key: "indexSizes", Value: bson.D{}}, {Key: "scaleFactor", Value: int32(scale)}, {Key: "nindexes", Value: int32(0)}}, nil
	}
	if err != nil {
		return nil, err
	}
	items, size := col.c.Usage()
	if len(col.uniques()) > 0 {
		// Leave the unique indexes' guard items out of the count.
		if items, err = countAll(col); err != nil {
			return nil, err
		}
	}
	idx := append([]bson.D{idIndex()}, col.indexes()...)
	sizes := bson.D{}
	for _, ix := range idx {
		n, _ := lookupField(ix, "name")
		if s, ok := n.(string); ok {
			sizes = append(sizes, bson.E{Key: s, Value: int64(0)})
		}
	}
	out := bson.D{{Key: "ns", Value: ns}, {Key: "size", Value: size / scale}, {Key: "count", Value: items}}
	if items > 0 {
		out = append(out, bson.E{Key: "avgObjSize", Value: size / items})
	}
	out = append(out, bson.E{Key: "storageSize", Value: size / scale}, bson.E{Key: "freeStorageSize", Value: int64(0)},
		bson.E{Key: "capped", Value: false}, bson.E{Key: "nindexes", Value: int32(len(idx))},
		bson.E{Key: "indexBuilds", Value: bson.A{}}, bson.E{Key: "totalIndexSize", Value: int64(0)},
		bson.E{Key: "totalSize", Value: size / scale}, bson.E{Key: "indexSizes", Value: sizes},
		bson.E{Key: "scaleFactor", Value: int32(scale)}, bson.E{Key: "sharded", Value: col.shard != ""})
	if col.shard != "" {
		out = append(out, bson.E{Key: "shardKey", Value: bson.D{{Key: col.shard, Value: "hashed"}}},
			bson.E{Key: "physicalPartitions", Value: int32(len(col.c.Partitions()))})
	}
	return out, nil
}

func cmdCollStats(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	v, ok := r.get("scale")
	scale, err := r.scaleOf(v, ok)
	if err != nil {
		return nil, err
	}
	return r.collStats(name, scale)
}

// collStatsStage is the document a leading $collStats stage produces
// ({storageStats: {...}, count: {}}); latency and query execution
// statistics are not kept.
func (r *request) collStatsStage(name string, spec any) (bson.D, error) {
	d, ok := spec.(bson.D)
	if !ok {
		return nil, newErr(5447000, "Location5447000", "$collStats must take a nested object but found: %s", showValue(spec))
	}
	out := bson.D{{Key: "ns", Value: r.db + "." + name}}
	host, _ := os.Hostname()
	out = append(out, bson.E{Key: "host", Value: host}, bson.E{Key: "localTime", Value: bson.NewDateTimeFromTime(r.s.cfg.Now())})
	for _, e := range d {
		switch e.Key {
		case "storageStats":
			o, _ := e.Value.(bson.D)
			v, ok := lookupField(o, "scale")
			scale, err := storageStatsScale(v, ok)
			if err != nil {
				return nil, err
			}
			st, err := r.collStats(name, scale)
			if err != nil {
				return nil, err
			}
			out = append(out, bson.E{Key: "storageStats", Value: st})
		case "count":
			st, err := r.collStats(name, 1)
			if err != nil {
				return nil, err
			}
			n, _ := lookupField(st, "count")
			out = append(out, bson.E{Key: "count", Value: n})
		case "latencyStats", "queryExecStats":
			return nil, newErr(115, "CommandNotSupported", "$collStats: %s is not kept by Parsec; use storageStats or count", e.Key)
		default:
			return nil, newErr(40415, "Location40415", "BSON field '$collStats.%s' is an unknown field.", e.Key)
		}
	}
	return out, nil
}

func cmdDBStats(r *request) (bson.D, error) {
	v, ok := r.get("scale")
	scale, err := r.scaleOf(v, ok)
	if err != nil {
		return nil, err
	}
	cs, err := r.s.eng.Containers(r.db)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, toCmdError(err)
	}
	var items, size int64
	indexes := int32(0)
	for _, ci := range cs {
		if c, err := r.s.eng.Container(r.db, ci.ID); err == nil {
			n, b := c.Usage()
			items += n
			size += b
			indexes += int32(len(collOf(r.s, r.db, ci.ID, c).indexes()) + 1)
		}
	}
	out := bson.D{{Key: "db", Value: r.db}, {Key: "collections", Value: int64(len(cs))}, {Key: "views", Value: int64(0)},
		{Key: "objects", Value: items}}
	avg := 0.0
	if items > 0 {
		avg = float64(size) / float64(items)
	}
	s := float64(scale)
	return append(out, bson.E{Key: "avgObjSize", Value: avg}, bson.E{Key: "dataSize", Value: float64(size) / s},
		bson.E{Key: "storageSize", Value: float64(size) / s}, bson.E{Key: "indexes", Value: int64(indexes)},
		bson.E{Key: "indexSize", Value: 0.0}, bson.E{Key: "totalSize", Value: float64(size) / s},
		bson.E{Key: "scaleFactor", Value: scale}), nil
}

// cmdDataSize answers dataSize over a whole collection from its usage;
// a key range is not supported (code 115).
func cmdDataSize(r *request) (bson.D, error) {
	ns, err := r.collName()
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"keyPattern", "min", "max"} {
		if _, ok := r.get(k); ok {
			return nil, newErr(115, "CommandNotSupported", "dataSize over a key range is not supported; give only the namespace")
		}
	}
	db, name, ok := strings.Cut(ns, ".")
	if !ok || db == "" || name == "" {
		return nil, newErr(73, "InvalidNamespace", "Invalid namespace specified '%s'", ns)
	}
	col, err := r.s.openColl(db, name)
	if isNotFound(err) {
		return bson.D{{Key: "size", Value: int64(0)}, {Key: "numObjects", Value: int64(0)}, {Key: "millis", Value: int64(0)}}, nil
	}
	if err != nil {
		return nil, err
	}
	items, size := col.c.Usage()
	return bson.D{{Key: "size", Value: size}, {Key: "numObjects", Value: items}, {Key: "millis", Value: int64(0)}}, nil
}

// cmdValidate reads every item of the collection and reports those that
// cannot be read as documents.
func cmdValidate(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	col, err := r.s.openColl(r.db, name)
	if isNotFound(err) {
		return nil, newErr(26, "NamespaceNotFound", "Collection '%s.%s' does not exist to validate.", r.db, name)
	}
	if err != nil {
		return nil, err
	}
	var n, bad int64
	var errs bson.A
	sc := col.scan(nil)
	for {
		_, ok, err := sc.next()
		if errors.Is(err, errStoredDoc) {
			bad++
			errs = append(errs, err.Error())
			break
		}
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		n++
	}
	if errs == nil {
		errs = bson.A{}
	}
	idx := append([]bson.D{idIndex()}, col.indexes()...)
	keys := bson.D{}
	for _, ix := range idx {
		iname, _ := lookupField(ix, "name")
		if s, ok := iname.(string); ok {
			keys = append(keys, bson.E{Key: s, Value: n})
		}
	}
	return bson.D{{Key: "ns", Value: col.ns()}, {Key: "nInvalidDocuments", Value: bad}, {Key: "nNonCompliantDocuments", Value: int64(0)},
		{Key: "nrecords", Value: n}, {Key: "nIndexes", Value: int32(len(idx))}, {Key: "keysPerIndex", Value: keys},
		{Key: "valid", Value: bad == 0}, {Key: "repaired", Value: false}, {Key: "warnings", Value: bson.A{}},
		{Key: "errors", Value: errs}, {Key: "extraIndexEntries", Value: bson.A{}}, {Key: "missingIndexEntries", Value: bson.A{}},
		{Key: "corruptRecords", Value: bson.A{}}}, nil
}

// cmdCompact answers compact: the engine compacts its storage in the
// background, so there is nothing to free on request.
func cmdCompact(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	if _, err := r.s.openColl(r.db, name); err != nil {
		return nil, err
	}
	return bson.D{{Key: "bytesFreed", Value: int64(0)}}, nil
}

// cmdRenameCollection refuses: Parsec's engine keys every item by its
// container's name and has no atomic rename of a container, so a rename
// would be a copy that readers could see half done.
func cmdRenameCollection(r *request) (bson.D, error) {
	return nil, newErr(115, "CommandNotSupported", "renameCollection is not supported: Parsec cannot rename a container atomically; copy the documents to a new collection (aggregate and insert) and drop the old one")
}
