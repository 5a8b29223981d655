package mongo

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/mongo/mql"
)

// indexesProperty is the container property that records the collection's
// index definitions (Extended JSON of an array of index documents).
const indexesProperty = "mongoIndexes"

// Index limits: MongoDB's 64 indexes per collection, and few enough unique
// indexes that a write's guard operations fit one engine batch.
const (
	maxIndexes       = 64
	maxUniqueIndexes = 32
)

func cmdListDatabases(r *request) (bson.D, error) {
	f, err := r.filterField("filter")
	if err != nil {
		return nil, err
	}
	nameOnly := r.boolean("nameOnly")
	var dbs bson.A
	var total int64
	for _, d := range r.s.eng.Databases() {
		var size, items int64
		cs, _ := r.s.eng.Containers(d.ID)
		for _, ci := range cs {
			if c, err := r.s.eng.Container(d.ID, ci.ID); err == nil {
				n, b := c.Usage()
				size += b
				items += n
			}
		}
		doc := bson.D{{Key: "name", Value: d.ID}}
		if !nameOnly {
			doc = append(doc, bson.E{Key: "sizeOnDisk", Value: size}, bson.E{Key: "empty", Value: items == 0})
		}
		if !f.Match(doc) {
			continue
		}
		total += size
		dbs = append(dbs, doc)
	}
	if dbs == nil {
		dbs = bson.A{}
	}
	out := bson.D{{Key: "databases", Value: dbs}}
	if !nameOnly {
		out = append(out, bson.E{Key: "totalSize", Value: total})
	}
	return out, nil
}

func cmdListCollections(r *request) (bson.D, error) {
	f, err := r.filterField("filter")
	if err != nil {
		return nil, err
	}
	nameOnly := r.boolean("nameOnly")
	cs, err := r.s.eng.Containers(r.db)
	if err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, toCmdError(err)
	}
	var out []bson.D
	for _, ci := range cs {
		doc := bson.D{{Key: "name", Value: ci.ID}, {Key: "type", Value: "collection"}}
		if !nameOnly {
			doc = append(doc,
				bson.E{Key: "options", Value: bson.D{}},
				bson.E{Key: "info", Value: bson.D{{Key: "readOnly", Value: false}, {Key: "uuid", Value: collUUID(ci)}}},
				bson.E{Key: "idIndex", Value: idIndex()})
		}
		if f.Match(doc) {
			out = append(out, doc)
		}
	}
	cd, err := r.doc("cursor")
	if err != nil {
		return nil, err
	}
	batchSize, err := firstBatchSize(cd)
	if err != nil {
		return nil, err
	}
	cur, err := docsCursor(r.db+".$cmd.listCollections", out)
	if err != nil {
		return nil, err
	}
	return r.firstBatch(cur, batchSize, false)
}

func idIndex() bson.D {
	return bson.D{{Key: "v", Value: int32(2)}, {Key: "key", Value: bson.D{{Key: "_id", Value: int32(1)}}}, {Key: "name", Value: "_id_"}}
}

func cmdCreate(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	capped, err := r.checkCapped()
	if err != nil {
		return nil, err
	}
	if capped {
		// The engine keeps no insertion order to evict by, so Parsec has
		// no capped collections: 72, the code mongod gives options it
		// cannot honour; an existing collection has other options (48).
		if col, oerr := r.s.openColl(r.db, name); oerr == nil {
			return nil, newErr(48, "NamespaceExists", "Collection %s already exists with different options", col.ns())
		}
		return nil, newErr(72, "InvalidOptions", "capped collections are not supported: Parsec cannot cap a collection")
	}
	if _, ok := r.get("viewOn"); ok {
		return nil, newErr(115, "CommandNotSupported", "views are not supported")
	}
	err = r.s.createColl(r.db, name, "", engine.Throughput{})
	if ce, ok := err.(*cmdError); ok && ce.Code == 48 {
		// As in MongoDB, creating a collection that exists with the same
		// options succeeds. Parsec records no collection options, so the
		// same options are none, on an unsharded collection.
		col, oerr := r.s.openColl(r.db, name)
		if oerr != nil {
			return nil, oerr
		}
		if opt := r.collectionOption(); opt != "" || col.shard != "" {
			return nil, newErr(48, "NamespaceExists", "Collection %s already exists with different options", col.ns())
		}
		return nil, nil
	}
	return nil, err
}

// createOptions are the create command's collection options (the fields
// that are not generic command arguments).
var createOptions = []string{"capped", "size", "max", "autoIndexId", "idIndex", "validator", "validationLevel",
	"validationAction", "indexOptionDefaults", "storageEngine", "collation", "timeseries", "expireAfterSeconds",
	"clusteredIndex", "changeStreamPreAndPostImages", "encryptedFields", "pipeline"}

// collectionOption returns the first collection option the create command
// gives ("" if none).
func (r *request) collectionOption() string {
	for _, o := range createOptions {
		if _, ok := r.get(o); ok {
			return o
		}
	}
	return ""
}

// namedColl opens the existing collection the command names first.
func (r *request) namedColl() (*coll, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	return r.s.openColl(r.db, name)
}

// dropMissingReply is drop's answer for a collection that does not exist:
// MongoDB 7.0 makes that drop a no-op that succeeds.
func dropMissingReply() bson.D { return bson.D{{Key: "info", Value: "ns not found"}} }

func cmdDrop(r *request) (bson.D, error) {
	col, err := r.namedColl()
	if isNotFound(err) {
		return dropMissingReply(), nil
	}
	if err != nil {
		return nil, err
	}
	nIdx := int32(len(col.indexes()) + 1)
	if err := r.s.eng.DeleteContainer(r.db, col.name); err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return dropMissingReply(), nil
		}
		return nil, toCmdError(err)
	}
	return bson.D{{Key: "nIndexesWas", Value: nIdx}, {Key: "ns", Value: col.ns()}}, nil
}

func cmdDropDatabase(r *request) (bson.D, error) {
	if err := r.s.eng.DeleteDatabase(r.db); err != nil && !errors.Is(err, engine.ErrNotFound) {
		return nil, toCmdError(err)
	}
	return bson.D{{Key: "dropped", Value: r.db}}, nil
}

// indexes returns the recorded index definitions (without _id_).
func (col *coll) indexes() []bson.D {
	raw, ok := col.c.Info().Extra[indexesProperty]
	if !ok {
		return nil
	}
	var wrap struct {
		V bson.A `bson:"v"`
	}
	if err := bson.UnmarshalExtJSON(append(append([]byte(`{"v":`), raw...), '}'), false, &wrap); err != nil {
		return nil
	}
	out, _ := docs(unescapeNames(wrap.V))
	return out
}

// setIndexes records index definitions in the container's properties.
func (s *Server) setIndexes(col *coll, idx []bson.D) error {
	info := col.c.Info()
	spec := engine.ContainerSpec{ID: info.ID, PartitionKey: info.PartitionKey, IndexingPolicy: info.IndexingPolicy,
		DefaultTTL: info.DefaultTTL, SyntheticKey: info.SyntheticKey, Extra: map[string]json.RawMessage{}}
	for k, v := range info.Extra {
		spec.Extra[k] = v
	}
	if len(idx) == 0 {
		delete(spec.Extra, indexesProperty)
	} else {
		raw, err := bson.Marshal(bson.D{{Key: "v", Value: idx}})
		if err != nil {
			return badValue("cannot encode the indexes: %v", err)
		}
		body, err := appendValue(nil, bson.Raw(raw).Lookup("v"), 1)
		if err != nil {
			return err
		}
		spec.Extra[indexesProperty] = body
	}
	if info.Fixed {
		spec.PartitionKey.Paths = nil
	}
	if _, err := s.eng.ReplaceContainer(col.db, spec, ""); err != nil {
		return toCmdError(err)
	}
	return nil
}

func cmdCreateIndexes(r *request) (bson.D, error) {
	name, err := r.collName()
	if err != nil {
		return nil, err
	}
	v, present := r.get("indexes")
	if !present {
		return nil, missingField("createIndexes", "indexes")
	}
	if _, isArr := v.(bson.A); !isArr {
		return nil, wrongType("createIndexes", "indexes", v, "array")
	}
	specs, ok := docs(v)
	if !ok {
		return nil, elementNotObject("createIndexes.indexes", v.(bson.A))
	}
	if len(specs) == 0 {
		return nil, badValue("Must specify at least one index to create")
	}
	ignoreUnknown := r.boolean("ignoreUnknownIndexOptions")
	for i, sp := range specs {
		if ignoreUnknown {
			sp = knownIndexFields(sp)
			specs[i] = sp
		}
		if err := checkIndexFields(sp); err != nil {
			return nil, err
		}
		if err := checkIndexKey(sp); err != nil {
			return nil, err
		}
		if err := checkIndexTTL(sp); err != nil {
			return nil, err
		}
	}
	_, existed := r.s.openColl(r.db, name)
	col, err := r.s.ensureColl(r.db, name)
	if err != nil {
		return nil, err
	}
	cur := col.indexes()
	before := int32(len(cur) + 1)
	added := map[string]bool{}
	for _, sp := range specs {
		kd := asDoc(lookupFieldValue(sp, "key"))
		n, _ := lookupFieldValue(sp, "name").(string)
		exists, err := indexConflict(sp, append([]bson.D{idIndex()}, cur...))
		if err != nil {
			return nil, err
		}
		if exists && added[n] {
			// Twice in one command (index_catalog_impl.cpp).
			return nil, newErr(68, "IndexAlreadyExists", "Identical index already exists: %s", n)
		}
		if exists {
			continue
		}
		added[n] = true
		if u, _ := lookupField(sp, "unique"); truthy(u) {
			if err := col.checkUnique(kd); err != nil {
				return nil, err
			}
		}
		if _, ok := lookupField(sp, "v"); !ok {
			sp = append(bson.D{{Key: "v", Value: int32(2)}}, sp...)
		}
		cur = append(cur, sp)
	}
	if len(cur)+1 > maxIndexes {
		return nil, newErr(67, "CannotCreateIndex", "a collection can have at most %d indexes", maxIndexes)
	}
	nu := 0
	for _, ix := range cur {
		if u, _ := lookupField(ix, "unique"); truthy(u) {
			nu++
		}
	}
	if nu > maxUniqueIndexes {
		return nil, newErr(67, "CannotCreateIndex", "a collection can have at most %d unique indexes (each write updates them in one engine batch of at most %d operations)", maxUniqueIndexes, engine.MaxBatchOps)
	}
	if int32(len(cur)+1) != before {
		if err := r.s.setIndexes(col, cur); err != nil {
			return nil, err
		}
	}
	out := bson.D{{Key: "numIndexesBefore", Value: before}, {Key: "numIndexesAfter", Value: int32(len(cur) + 1)},
		{Key: "createdCollectionAutomatically", Value: existed != nil}}
	if int32(len(cur)+1) == before {
		out = append(out, bson.E{Key: "note", Value: "all indexes already exist"})
	}
	return out, nil
}

// indexPlugins are the index types whose name can be a key's value.
var indexPlugins = map[string]bool{"2d": true, "2dsphere": true, "text": true, "hashed": true}

// checkIndexKey checks an index specification's key as mongod does
// (index_key_validate.cpp): 40414 without one, 67 CannotCreateIndex for a
// value that is not a non-zero number or a known index type.
func checkIndexKey(sp bson.D) error {
	key, ok := lookupField(sp, "key")
	if !ok {
		return missingField("createIndexes.indexes", "key")
	}
	kd, ok := key.(bson.D)
	if !ok {
		return wrongType("createIndexes.indexes", "key", key, "object")
	}
	fail := func(format string, args ...any) error {
		return newErr(67, "CannotCreateIndex", "Error in specification %s :: caused by :: %s", showValue(sp), fmt.Sprintf(format, args...))
	}
	if len(kd) == 0 {
		return fail("Index keys cannot be empty.")
	}
	plugin := ""
	for _, e := range kd {
		switch x := e.Value.(type) {
		case int32, int64, float64, bson.Decimal128:
			f := numberValue(x)
			if math.IsNaN(f) {
				return fail("Values in the index key pattern cannot be NaN.")
			}
			if f == 0 {
				return fail("Values in the index key pattern cannot be 0.")
			}
		case string:
			if !indexPlugins[x] {
				return fail("Unknown index plugin '%s'", x)
			}
			if plugin != "" && plugin != x {
				return fail("Can't use more than one index plugin for a single index.")
			}
			plugin = x
		default:
			return fail("Values in v:2 index key pattern cannot be of type %s. Only numbers > 0, numbers < 0, and strings are allowed.", typeName(e.Value))
		}
		if e.Key == "" {
			return fail("Index keys cannot be an empty field.")
		}
	}
	return nil
}

// indexOptions are the options that make two indexes on one key
// different indexes.
var indexOptions = []string{"unique", "sparse", "partialFilterExpression", "expireAfterSeconds", "collation"}

// sameIndexOptions reports whether two index specifications have
// equivalent options.
func sameIndexOptions(a, b bson.D) bool {
	for _, o := range indexOptions {
		x, xok := lookupField(a, o)
		y, yok := lookupField(b, o)
		switch o {
		case "unique", "sparse":
			if truthy(x) != truthy(y) {
				return false
			}
		default:
			if xok != yok || (xok && mql.Compare(x, y) != 0) {
				return false
			}
		}
	}
	return true
}

// indexConflict compares a requested index with the existing ones as
// mongod does (index_catalog_impl.cpp): the same index is already there
// (exists); the same name on another key is 86 IndexKeySpecsConflict,
// with other options 85 IndexOptionsConflict; the same key and options
// under another name is 85.
func indexConflict(sp bson.D, existing []bson.D) (exists bool, err error) {
	name, _ := lookupField(sp, "name")
	key := asDoc(lookupFieldValue(sp, "key"))
	for _, ix := range existing {
		n, _ := lookupField(ix, "name")
		k := asDoc(lookupFieldValue(ix, "key"))
		sameKey := mql.Compare(key, k) == 0 && len(key) == len(k)
		switch {
		case n == name && !sameKey:
			return false, newErr(86, "IndexKeySpecsConflict", "An existing index has the same name as the requested index. When index names are not specified, they are auto generated and can cause conflicts. Please refer to our documentation. Requested index: %s, existing index: %s", showValue(sp), showValue(ix))
		case n == name && !sameIndexOptions(sp, ix):
			return false, newErr(85, "IndexOptionsConflict", "An equivalent index already exists with the same name but different options. Requested index: %s, existing index: %s", showValue(sp), showValue(ix))
		case n == name:
			return true, nil
		case sameKey && sameIndexOptions(sp, ix):
			return false, newErr(85, "IndexOptionsConflict", "Index already exists with a different name: %s", n)
		}
	}
	return false, nil
}

// numberValue is a number as a float64, NaN for a value that is not one.
func numberValue(v any) float64 {
	if f, ok := mql.Float(v); ok {
		return f
	}
	return math.NaN()
}

// lookupFieldValue is lookupField's value alone.
func lookupFieldValue(d bson.D, path string) any {
	v, _ := lookupField(d, path)
	return v
}

func cmdListIndexes(r *request) (bson.D, error) {
	col, err := r.namedColl()
	if isNotFound(err) {
		name, _ := r.collName()
		return nil, newErr(26, "NamespaceNotFound", "ns does not exist: %s.%s", r.db, name)
	}
	if err != nil {
		return nil, err
	}
	out := append([]bson.D{idIndex()}, col.indexes()...)
	cur, err := docsCursor(col.ns(), out)
	if err != nil {
		return nil, err
	}
	return r.firstBatch(cur, 101, false)
}

func cmdDropIndexes(r *request) (bson.D, error) {
	col, err := r.namedColl()
	if err != nil {
		return nil, err
	}
	cur := col.indexes()
	was := int32(len(cur) + 1)
	v, _ := r.get("index")
	var keep []bson.D
	matches := func(ix bson.D) bool {
		n, _ := lookupField(ix, "name")
		k, _ := lookupField(ix, "key")
		switch x := v.(type) {
		case string:
			return x == "*" || n == x
		case bson.A:
			for _, y := range x {
				if y == n {
					return true
				}
			}
		case bson.D:
			return equalDocs(x, asDoc(k))
		}
		return false
	}
	found := false
	for _, ix := range cur {
		if matches(ix) {
			found = true
			continue
		}
		keep = append(keep, ix)
	}
	if s, ok := v.(string); ok && s == "_id_" {
		return nil, newErr(72, "InvalidOptions", "cannot drop _id index")
	}
	if !found {
		if s, ok := v.(string); !ok || s != "*" {
			return nil, newErr(27, "IndexNotFound", "index not found with name [%v]", v)
		}
	}
	dropped := map[string]bool{}
	for _, u := range col.uniques() {
		dropped[u.name] = true
	}
	if err := r.s.setIndexes(col, keep); err != nil {
		return nil, err
	}
	for _, u := range col.uniques() {
		delete(dropped, u.name)
	}
	for name := range dropped {
		if err := col.dropGuards(name); err != nil {
			return nil, err
		}
	}
	return bson.D{{Key: "nIndexesWas", Value: was}}, nil
}

func asDoc(v any) bson.D {
	d, _ := v.(bson.D)
	return d
}

// shardKeyField reads a shard key document {field: "hashed"} (or 1).
func shardKeyField(v any) (string, error) {
	d, ok := v.(bson.D)
	if !ok || len(d) != 1 {
		return "", badValue("the shard key must be a document of one field, e.g. {region: \"hashed\"}; compound shard keys are not supported")
	}
	switch x := d[0].Value.(type) {
	case string:
		if x != "hashed" {
			return "", badValue("unsupported shard key kind %q: use \"hashed\"", x)
		}
	default:
		if n, ok := asInt(x); !ok || n != 1 {
			return "", badValue("unsupported shard key kind %s: use \"hashed\"", showValue(x))
		}
	}
	if d[0].Key == "" || d[0].Key == "_id" || strings.HasPrefix(d[0].Key, "$") {
		return "", badValue("%q cannot be the shard key", d[0].Key)
	}
	return d[0].Key, nil
}

func cmdShardCollection(r *request) (bson.D, error) {
	ns, err := r.collName()
	if err != nil {
		return nil, err
	}
	db, name, ok := strings.Cut(ns, ".")
	if !ok {
		return nil, newErr(73, "InvalidNamespace", "shardCollection needs a namespace \"db.collection\", not %q", ns)
	}
	kv, _ := r.get("key")
	field, err := shardKeyField(kv)
	if err != nil {
		return nil, err
	}
	col, err := r.s.openColl(db, name)
	switch {
	case err == nil:
		if col.shard == field {
			return bson.D{{Key: "collectionsharded", Value: ns}}, nil
		}
		return nil, newErr(20, "IllegalOperation", "collection %s already exists; a collection's shard key is fixed when it is created (drop it, then shard it before inserting)", ns)
	case !isNotFound(err):
		return nil, err
	}
	if err := r.s.createColl(db, name, field, engine.Throughput{}); err != nil {
		return nil, err
	}
	return bson.D{{Key: "collectionsharded", Value: ns}}, nil
}

// throughputOf reads offerThroughput and autoScaleSettings.maxThroughput.
func (r *request) throughputOf() (engine.Throughput, error) {
	var t engine.Throughput
	if v, ok := r.get("offerThroughput"); ok {
		n, ok := asInt(v)
		if !ok || n <= 0 || n > 1<<30 {
			return t, badValue("offerThroughput must be a positive number")
		}
		t.RUs = int(n)
	}
	as, err := r.doc("autoScaleSettings")
	if err != nil {
		return t, err
	}
	if v, ok := lookupField(as, "maxThroughput"); ok {
		n, ok := asInt(v)
		if !ok || n <= 0 || n > 1<<30 {
			return t, badValue("autoScaleSettings.maxThroughput must be a positive number")
		}
		t.AutoscaleMax = int(n)
	}
	if t.RUs > 0 && t.AutoscaleMax > 0 {
		return t, badValue("give either offerThroughput or autoScaleSettings, not both")
	}
	return t, nil
}

func cmdCustomAction(r *request) (bson.D, error) {
	action, ok := r.cmd[0].Value.(string)
	if !ok {
		return nil, typeMismatch("customAction must be a string")
	}
	switch action {
	case "CreateDatabase":
		t, err := r.throughputOf()
		if err != nil {
			return nil, err
		}
		if _, err := r.s.eng.CreateDatabase(r.db, t); err != nil {
			if errors.Is(err, engine.ErrConflict) {
				return nil, newErr(48, "NamespaceExists", "Database %s already exists", r.db)
			}
			return nil, toCmdError(err)
		}
		return nil, nil
	case "GetDatabase":
		d, err := r.s.eng.Database(r.db)
		if err != nil {
			return nil, newErr(26, "NamespaceNotFound", "Database %s does not exist", r.db)
		}
		out := bson.D{{Key: "database", Value: d.ID}}
		return append(out, throughputFields(d.Throughput, d.AutoscaleMax)...), nil
	case "CreateCollection":
		name, err := r.str("collection")
		if err != nil {
			return nil, err
		}
		if name == "" {
			return nil, badValue("CreateCollection needs 'collection'")
		}
		shard, err := r.str("shardKey")
		if err != nil {
			return nil, err
		}
		t, err := r.throughputOf()
		if err != nil {
			return nil, err
		}
		return nil, r.s.createColl(r.db, name, shard, t)
	case "GetCollection":
		name, err := r.str("collection")
		if err != nil {
			return nil, err
		}
		col, err := r.s.openColl(r.db, name)
		if err != nil {
			return nil, err
		}
		info := col.c.Info()
		out := bson.D{{Key: "database", Value: r.db}, {Key: "collection", Value: name}}
		if col.shard != "" {
			out = append(out, bson.E{Key: "shardKeyDefinition", Value: bson.D{{Key: col.shard, Value: "Hash"}}})
		}
		out = append(out, throughputFields(info.Throughput, info.AutoscaleMax)...)
		return out, nil
	case "UpdateCollection":
		name, err := r.str("collection")
		if err != nil {
			return nil, err
		}
		t, err := r.throughputOf()
		if err != nil {
			return nil, err
		}
		if t.RUs == 0 && t.AutoscaleMax == 0 {
			return nil, badValue("UpdateCollection needs offerThroughput or autoScaleSettings.maxThroughput")
		}
		if _, err := r.s.openColl(r.db, name); err != nil {
			return nil, err
		}
		for _, o := range r.s.eng.Offers() {
			if o.DB == r.db && o.Coll == name {
				if _, err := r.s.eng.ReplaceOffer(o.ID, t); err != nil {
					return nil, toCmdError(err)
				}
				return nil, nil
			}
		}
		return nil, badValue("collection %s.%s has no throughput of its own (it shares its database's)", r.db, name)
	}
	return nil, newErr(59, "CommandNotFound", "no such customAction: '%s' (supported: CreateDatabase, GetDatabase, CreateCollection, GetCollection, UpdateCollection)", action)
}

func throughputFields(rus, autoMax int) bson.D {
	if autoMax > 0 {
		return bson.D{{Key: "autoScaleSettings", Value: bson.D{{Key: "maxThroughput", Value: int32(autoMax)}}}}
	}
	if rus > 0 {
		return bson.D{{Key: "provisionedThroughput", Value: int32(rus)}}
	}
	return nil
}

// checkUnique refuses a unique index Parsec cannot enforce: on a
// collection that has documents (as Cosmos), or on a sharded collection
// without the shard key.
func (col *coll) checkUnique(key bson.D) error {
	if items, _ := col.c.Usage(); items > 0 {
		return newErr(67, "CannotCreateIndex", "a unique index can only be created on an empty collection (%s has %d documents), as in Cosmos DB", col.ns(), items)
	}
	if col.shard == "" {
		return nil
	}
	for _, e := range key {
		if e.Key == col.shard {
			return nil
		}
	}
	return newErr(67, "CannotCreateIndex", "a unique index on the sharded collection %s must contain its shard key %q", col.ns(), col.shard)
}

// countAll counts a collection's documents by reading them.
func countAll(col *coll) (int64, error) {
	sc := col.scan(nil)
	var n int64
	for {
		_, ok, err := sc.next()
		if err != nil {
			return 0, err
		}
		if !ok {
			return n, nil
		}
		n++
	}
}

// firstBatchSize reads the batchSize of a command's cursor document (101
// when absent, as in mongod).
func firstBatchSize(cd bson.D) (int64, error) {
	batchSize := int64(101)
	for _, e := range cd {
		if e.Key == "batchSize" {
			n, ok := asInt(e.Value)
			if !ok {
				return 0, wrongType("cursor", "batchSize", e.Value, "number")
			}
			if n < 0 {
				return 0, negativeField("batchSize", n)
			}
			batchSize = n
		}
	}
	return batchSize, nil
}
