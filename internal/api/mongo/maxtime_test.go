package mongo

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// steppingClock is a clock that moves on by step at every reading, so that
// a command runs past any maxTimeMS smaller than step without waiting.
type steppingClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *steppingClock) setStep(d time.Duration) {
	c.mu.Lock()
	c.step = d
	c.mu.Unlock()
}

// maxTimeMS ends find, aggregate, count and distinct, and a cursor's
// getMores, with 50 MaxTimeMSExpired "operation exceeded time limit"
// (error_codes.yml; mongod's message); a cursor keeps the time its
// command had left (mongod's leftover maxTime), and a getMore of a cursor
// that is not tailable may not set maxTimeMS (getmore_cmd.cpp: BadValue).
func TestMaxTimeMS(t *testing.T) {
	clock := &steppingClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	env := newEnv(t, envOptions{cfg: func(c *Config) { c.Now = clock.Now }})
	// Without a deadline: the driver sends one as maxTimeMS.
	ctx := context.Background()
	db := env.client.Database("d")
	var docs []any
	for i := 0; i < 250; i++ {
		docs = append(docs, bson.D{{Key: "_id", Value: i}, {Key: "k", Value: i % 7}})
	}
	if _, err := db.Collection("c").InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	expired := func(name string, cmd bson.D) {
		t.Helper()
		err := db.RunCommand(ctx, cmd).Err()
		if cmdCode(err) != 50 || !contains(err.Error(), "operation exceeded time limit") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	filter := bson.D{{Key: "k", Value: bson.D{{Key: "$gte", Value: 0}}}}
	cmds := map[string]bson.D{
		"find":      {{Key: "find", Value: "c"}, {Key: "filter", Value: filter}},
		"aggregate": {{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{bson.D{{Key: "$match", Value: filter}}}}, {Key: "cursor", Value: bson.D{}}},
		"count":     {{Key: "count", Value: "c"}, {Key: "query", Value: filter}},
		"distinct":  {{Key: "distinct", Value: "c"}, {Key: "key", Value: "k"}, {Key: "query", Value: filter}},
	}
	clock.setStep(time.Second)
	for name, cmd := range cmds {
		// Without maxTimeMS the slow clock does not matter.
		if err := db.RunCommand(ctx, cmd).Err(); err != nil {
			t.Fatalf("%s without maxTimeMS: %v", name, err)
		}
		expired(name, append(cmd, bson.E{Key: "maxTimeMS", Value: int32(500)}))
	}

	// A cursor spends what its find had left over its getMores.
	clock.setStep(0)
	var reply struct {
		Cursor struct {
			ID int64 `bson:"id"`
		} `bson:"cursor"`
	}
	find := bson.D{{Key: "find", Value: "c"}, {Key: "batchSize", Value: 2}, {Key: "maxTimeMS", Value: int32(500)}}
	if err := db.RunCommand(ctx, find).Decode(&reply); err != nil || reply.Cursor.ID == 0 {
		t.Fatalf("find: %v %v", reply, err)
	}
	id := reply.Cursor.ID
	getMore := bson.D{{Key: "getMore", Value: id}, {Key: "collection", Value: "c"}, {Key: "batchSize", Value: 2}}
	if err := db.RunCommand(ctx, getMore).Err(); err != nil {
		t.Fatalf("getMore in time: %v", err)
	}
	if err := db.RunCommand(ctx, append(getMore, bson.E{Key: "maxTimeMS", Value: int32(100)})).Err(); cmdCode(err) != 2 {
		t.Fatalf("getMore with maxTimeMS: %v", err)
	}
	clock.setStep(time.Second)
	expired("getMore", getMore)
	if cursorOpen(env, id) {
		t.Fatal("the cursor outlived its maxTimeMS")
	}
}

// maxTimeMS values mongod refuses, with its codes (FerretDB's
// TestAggregateCommandMaxTimeMSErrors records them from MongoDB): checked
// before anything else, so a getMore of no cursor reports them too.
func TestMaxTimeMSValidation(t *testing.T) {
	env := newEnv(t, envOptions{})
	ctx := context.Background()
	db := env.client.Database("d")
	for _, tc := range []struct {
		v    any
		code int
		msg  string
	}{
		{int32(-1), 51024, "BSON field 'maxTimeMS' value must be >= 0, actual value '-1'"},
		{-1.5, 51024, "actual value '-2'"},
		{1000.5, 2, "maxTimeMS has non-integral value"},
		{int64(1) << 31, 2, "2147483648 value for maxTimeMS is out of range"},
		{nil, 2, "maxTimeMS must be a number"},
		{"1", 14, "BSON field 'aggregate.maxTimeMS' is the wrong type 'string'"},
	} {
		cmd := bson.D{{Key: "aggregate", Value: "c"}, {Key: "pipeline", Value: bson.A{}}, {Key: "cursor", Value: bson.D{}}, {Key: "maxTimeMS", Value: tc.v}}
		err := db.RunCommand(ctx, cmd).Err()
		if cmdCode(err) != tc.code || !contains(err.Error(), tc.msg) {
			t.Errorf("maxTimeMS %v: %v", tc.v, err)
		}
	}
	for _, v := range []any{int32(0), int64(2147483647), 10.0} {
		if err := db.RunCommand(ctx, bson.D{{Key: "find", Value: "c"}, {Key: "maxTimeMS", Value: v}}).Err(); err != nil {
			t.Errorf("maxTimeMS %v: %v", v, err)
		}
	}
	err := db.RunCommand(ctx, bson.D{{Key: "getMore", Value: int64(12345)}, {Key: "collection", Value: "c"}, {Key: "maxTimeMS", Value: int32(-1)}}).Err()
	if cmdCode(err) != 51024 {
		t.Fatalf("getMore of no cursor with a negative maxTimeMS: %v", err)
	}
}
