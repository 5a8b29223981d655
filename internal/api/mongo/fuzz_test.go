package mongo

import (
	"bytes"
	"log"
	"strings"
	"sync"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FuzzCommand runs arbitrary command documents through the dispatcher on a
// live engine: every reply has an ok field and no handler panics (the
// dispatcher would catch it and log "panicked").
func FuzzCommand(f *testing.F) {
	logs := &syncBuffer{}
	env := newEnv(f, envOptions{cfg: func(c *Config) { c.Logger = log.New(logs, "", 0) }})
	c := &conn{s: env.srv, id: 1, remote: "fuzz"}
	seed := func(d bson.D) {
		b, err := bson.Marshal(d)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	seed(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 1}, {Key: "a", Value: bson.A{1, "x"}}}}}})
	seed(bson.D{{Key: "find", Value: "c"}, {Key: "filter", Value: bson.D{{Key: "a", Value: bson.D{{Key: "$gt", Value: 0}}}}}, {Key: "sort", Value: bson.D{{Key: "a", Value: -1}}}, {Key: "batchSize", Value: 1}})
	seed(bson.D{{Key: "update", Value: "c"}, {Key: "updates", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "u", Value: bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}}, {Key: "upsert", Value: true}}}}})
	seed(bson.D{{Key: "findAndModify", Value: "c"}, {Key: "query", Value: bson.D{}}, {Key: "remove", Value: true}})
	seed(bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$a"}}}}}}, {Key: "cursor", Value: bson.D{}}})
	seed(bson.D{{Key: "delete", Value: "c"}, {Key: "deletes", Value: bson.A{bson.D{{Key: "q", Value: bson.D{}}, {Key: "limit", Value: 0}}}}})
	seed(bson.D{{Key: "customAction", Value: "CreateCollection"}, {Key: "collection", Value: "s"}, {Key: "shardKey", Value: "k"}})
	seed(bson.D{{Key: "createIndexes", Value: "c"}, {Key: "indexes", Value: bson.A{bson.D{{Key: "key", Value: bson.D{{Key: "a", Value: 1}}}}}}})
	seed(bson.D{{Key: "getMore", Value: int64(5)}, {Key: "collection", Value: "c"}})
	seed(bson.D{{Key: "distinct", Value: "c"}, {Key: "key", Value: "a"}})
	lsid := bson.D{{Key: "id", Value: bson.Binary{Subtype: 4, Data: []byte("0123456789abcdef")}}}
	seed(bson.D{{Key: "insert", Value: "c"}, {Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: 7}}}},
		{Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "startTransaction", Value: true}, {Key: "autocommit", Value: false}})
	seed(bson.D{{Key: "commitTransaction", Value: 1}, {Key: "lsid", Value: lsid}, {Key: "txnNumber", Value: int64(1)}, {Key: "autocommit", Value: false}})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 || bson.Raw(b).Validate() != nil {
			return
		}
		var d bson.D
		if bson.Unmarshal(b, &d) != nil || len(d) == 0 {
			return
		}
		// Keep the fuzzer off commands that remove everything it built,
		// and off throughputs that create thousands of partitions.
		if d[0].Key == "dropDatabase" {
			return
		}
		for _, e := range d {
			if e.Key == "offerThroughput" || e.Key == "autoScaleSettings" {
				return
			}
		}
		d = append(d, bson.E{Key: "$db", Value: "fz"})
		raw, err := bson.Marshal(d)
		if err != nil {
			return
		}
		reply := c.dispatch(raw)
		ok := false
		for _, e := range reply {
			if e.Key == "ok" {
				ok = true
			}
		}
		if !ok {
			t.Fatalf("reply without ok: %v", reply)
		}
		if strings.Contains(logs.String(), "panicked") {
			t.Fatalf("a handler panicked on %v:\n%s", d, logs.String())
		}
	})
}
