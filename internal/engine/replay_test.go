package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/jsondoc"
	"github.com/parsecdb/parsec/internal/partition"
	"github.com/parsecdb/parsec/internal/storage"
)

// TestReplayGivesIdenticalStore is the contract of the logs: a random
// workload (item writes of every kind, batches, patches with conditions,
// splits for storage and for throughput, index rebuilds, a deleted
// container, restarts) runs against one store while the engine logs; the
// log, applied to an empty store by a replica that itself restarts at
// random points, gives the same key-value contents byte for byte.
func TestReplayGivesIdenticalStore(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testReplay(t, seed) })
	}
}

func testReplay(t *testing.T, seed uint64) {
	var mu sync.Mutex
	var entries []LogEntry
	opts := Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true,
		Now: func() time.Time { return time.Unix(1_800_000_000, 0) },
		commandLog: func(en LogEntry) {
			mu.Lock()
			entries = append(entries, en)
			mu.Unlock()
		}}
	fs := vfs.NewMem()
	st, err := storage.Open(storage.Options{Dir: "/a", FS: fs, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	if _, err := e.CreateDatabase("db", Throughput{}); err != nil {
		t.Fatal(err)
	}
	specs := []ContainerSpec{
		// c keeps a full-text index on /text (its records are in the store
		// the replay must reproduce, splits included).
		{ID: "c", PartitionKey: hashDef("/pk"),
			IndexingPolicy: json.RawMessage(`{"fullTextIndexes":[{"path":"/text"}]}`),
			Extra:          map[string]json.RawMessage{"fullTextPolicy": json.RawMessage(`{"defaultLanguage":"en-US","fullTextPaths":[{"path":"/text"}]}`)}},
		{ID: "h", PartitionKey: hashDef("/tenant", "/pk")},
		{ID: "s", PartitionKey: hashDef("/sk"), SyntheticKey: `concat(/t, "-", /pk)`},
		{ID: "doomed", PartitionKey: hashDef("/pk")},
	}
	for _, s := range specs {
		if _, err := e.CreateContainer("db", s, Throughput{RUs: 2000}); err != nil {
			t.Fatal(err)
		}
	}

	// A stored procedure that the workload runs on container c: its
	// writes reach the log as one atomic command with a version
	// precondition.
	cs, _ := e.Container("db", "c")
	if _, err := cs.CreateScript(StoredProcedure, ScriptSpec{ID: "bump", Body: replayProcedure}); err != nil {
		t.Fatal(err)
	}

	policies := []string{
		`{"indexingMode":"consistent","includedPaths":[{"path":"/*"}],"excludedPaths":[{"path":"/pad/?"}]}`,
		`{"indexingMode":"consistent","includedPaths":[{"path":"/n/?"},{"path":"/s/?"}],"excludedPaths":[{"path":"/*"}]}`,
		`{"indexingMode":"none"}`,
	}
	for round := 0; round < 4; round++ {
		var wg sync.WaitGroup
		for w := 0; w < 3; w++ {
			wg.Add(1)
			wrng := rand.New(rand.NewPCG(seed, uint64(round*10+w)))
			go func() {
				defer wg.Done()
				for i := 0; i < 150; i++ {
					ct, err := e.Container("db", specs[wrng.IntN(3)].ID)
					if err != nil {
						t.Error(err)
						return
					}
					if err := randomCommand(ct, wrng); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		// Meanwhile: splits, an index rebuild, a throughput change.
		c, _ := e.Container("db", "c")
		parts := c.Partitions()
		p := parts[rng.IntN(len(parts))]
		if _, err := c.splitForStorage(p); err != nil && !errors.Is(err, ErrPartitionGone) {
			t.Error(err)
		}
		h, _ := e.Container("db", "h")
		if round%2 == 0 {
			pol := json.RawMessage(policies[(round/2)%len(policies)])
			if _, err := e.ReplaceContainer("db", ContainerSpec{ID: "h", PartitionKey: hashDef("/tenant", "/pk"), IndexingPolicy: pol}, ""); err != nil {
				t.Error(err)
			}
		}
		hp := h.Partitions()
		if _, err := h.splitForStorage(hp[rng.IntN(len(hp))]); err != nil && !errors.Is(err, ErrPartitionGone) {
			t.Error(err)
		}
		if round == 1 {
			for _, o := range e.Offers() {
				if o.ResourceRid == c.Info().Rid {
					if _, err := e.ReplaceOffer(o.ID, Throughput{RUs: 4000 + 1000*round}); err != nil {
						t.Error(err)
					}
				}
			}
		}
		wg.Wait()
		e.builders.Wait()
		if round == 2 {
			if err := e.DeleteContainer("db", "doomed"); err != nil {
				t.Fatal(err)
			}
		}
		userOps(t, e, round)
		// Restart: the engine reopens the same store and logs on.
		e.Close()
		if e, err = Open(st, opts); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()
	if t.Failed() {
		return
	}
	kinds := map[string]int{}
	for _, en := range entries {
		switch cmd, err := DecodeCommand(en.Data); {
		case en.Range == "":
			kinds["catalog"]++
		case err != nil:
			t.Fatalf("a logged command does not decode: %v", err)
		case cmd.Split != nil:
			kinds["split"]++
		case cmd.Reindex != nil:
			kinds["reindex"]++
		case cmd.IfVersion != nil:
			kinds["script"]++
		default:
			kinds["items"]++
		}
	}
	for _, k := range []string{"catalog", "split", "reindex", "items", "script"} {
		if kinds[k] == 0 {
			t.Fatalf("the workload logged no %s entry: %v", k, kinds)
		}
	}

	// The replica applies the log in three parts, restarting (closing and
	// reopening its store) between them: it keeps no state but the store.
	cut1 := rng.IntN(len(entries))
	cut2 := cut1 + rng.IntN(len(entries)-cut1)
	var replica *storage.DB
	for _, part := range [][]LogEntry{entries[:cut1], entries[cut1:cut2], entries[cut2:]} {
		if replica, err = storage.Open(storage.Options{Dir: "/b", FS: fs, Reserve: -1}); err != nil {
			t.Fatal(err)
		}
		if err := ApplyLog(replica, part); err != nil {
			t.Fatal(err)
		}
		if err := replica.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if replica, err = storage.Open(storage.Options{Dir: "/b", FS: fs, Reserve: -1}); err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	defer st.Close()
	n := sameContents(t, st, replica)
	textRecs := 0
	tlo, thi := storage.ContainerTextSpan(cs.rid)
	if err := st.Iterate(tlo, thi, func(_, _ []byte) (bool, error) { textRecs++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if textRecs == 0 {
		t.Fatal("container c has no full-text index records: the replay did not check them")
	}
	t.Logf("seed %d: %d log entries %v; %d keys identical", seed, len(entries), kinds, n)

	// The replica is a working store: an engine opens it and finds the
	// same partition maps.
	e2, err := Open(replica, Options{PartitionMaxRUs: 1000, NoThrottle: true, manualStorageSplits: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	c2, err := e2.Container("db", "c")
	if err != nil {
		t.Fatal(err)
	}
	if m := c2.Info().Ranges; len(m) < 2 {
		t.Fatalf("the replica's container has %d ranges; the workload split it", len(m))
	} else if _, err := partition.New(m); err != nil {
		t.Fatal(err)
	}
}

// userOps changes users and permissions in round of the replay workload:
// creates, a rename that moves permissions, replaces, deletes, and a
// deleted database that held users.
func userOps(t *testing.T, e *Engine, round int) {
	t.Helper()
	u := fmt.Sprint("u", round)
	if _, err := e.CreateUser("db", u); err != nil {
		t.Fatal(err)
	}
	for i, spec := range []PermissionSpec{
		{ID: "read", Mode: PermissionRead, Resource: "dbs/db/colls/c"},
		{ID: "key", Mode: PermissionAll, Resource: "/dbs/db/colls/h/", PartitionKey: json.RawMessage(`["t", 5]`)},
		{ID: "item", Mode: PermissionAll, Resource: "dbs/db/colls/s/docs/x"},
	} {
		if _, err := e.CreatePermission("db", u, spec); err != nil {
			t.Fatalf("permission %d: %v", i, err)
		}
	}
	if _, err := e.ReplacePermission("db", u, PermissionSpec{ID: "read", Mode: PermissionAll, Resource: "dbs/db/colls/c", PartitionKey: json.RawMessage(`"k"`)}, ""); err != nil {
		t.Fatal(err)
	}
	if err := e.DeletePermission("db", u, "item"); err != nil {
		t.Fatal(err)
	}
	if round > 0 {
		prev := fmt.Sprint("u", round-1)
		if round%2 == 1 {
			if _, err := e.ReplaceUser("db", prev, prev+"-renamed", ""); err != nil {
				t.Fatal(err)
			}
		} else if err := e.DeleteUser("db", prev); err != nil {
			t.Fatal(err)
		}
	}
	if round == 1 {
		if _, err := e.CreateDatabase("other", Throughput{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreateContainer("other", ContainerSpec{ID: "c", PartitionKey: hashDef("/pk")}, Throughput{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreateUser("other", "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.CreatePermission("other", "x", PermissionSpec{ID: "p", Mode: PermissionRead, Resource: "dbs/other/colls/c"}); err != nil {
			t.Fatal(err)
		}
	}
	if round == 2 {
		if err := e.DeleteDatabase("other"); err != nil {
			t.Fatal(err)
		}
	}
}

// sameContents fails unless a and b hold the same keys and values, but for
// the node's own id allocator record. It returns how many keys it compared.
func sameContents(t *testing.T, a, b *storage.DB) int {
	t.Helper()
	dump := func(db *storage.DB) (keys, vals [][]byte) {
		err := db.Iterate([]byte{0}, []byte{0xff}, func(k, v []byte) (bool, error) {
			// The allocator's high-water mark and the record of the
			// item-index backfill are the node's own bookkeeping.
			if !bytes.Equal(k, storage.SeqKey()) && !bytes.Equal(k, storage.ItemIndexesKey()) {
				keys, vals = append(keys, bytes.Clone(k)), append(vals, bytes.Clone(v))
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return keys, vals
	}
	ka, va := dump(a)
	kb, vb := dump(b)
	for i := 0; i < min(len(ka), len(kb)); i++ {
		if !bytes.Equal(ka[i], kb[i]) {
			t.Fatalf("key %d differs: the store has %q, the replica %q", i, ka[i], kb[i])
		}
		if !bytes.Equal(va[i], vb[i]) {
			t.Fatalf("the value of %q differs:\nstore   %q\nreplica %q", ka[i], va[i], vb[i])
		}
	}
	if len(ka) != len(kb) {
		t.Fatalf("the store has %d keys, the replica %d", len(ka), len(kb))
	}
	return len(ka)
}

// randomCommand runs one random item command on c: a single operation of
// any kind (some of which fail), or a batch, atomic or not.
// replayProcedure counts its runs in a document of its logical
// partition, creates a document, and throws when asked to.
const replayProcedure = `function (pk, id, fail) {
	var coll = getContext().getCollection();
	coll.readDocument(coll.getSelfLink() + "docs/ctr", function (err, doc) {
		var n = err ? 0 : doc.n;
		coll.upsertDocument(coll.getSelfLink(), {id: "ctr", pk: pk, n: n + 1});
		coll.createDocument(coll.getSelfLink(), {id: id, pk: pk, n: n});
		if (fail) throw new Error("asked to fail");
		getContext().getResponse().setBody(n + 1);
	});
}`

func randomCommand(c *Container, rng *rand.Rand) error {
	pk, tenant := fmt.Sprint("k", rng.IntN(40)), fmt.Sprint("t", rng.IntN(3))
	if c.Info().ID == "c" && rng.IntN(5) == 0 {
		args := fmt.Appendf(nil, `[%q, "s%d", %v]`, pk, rng.IntN(30), rng.IntN(4) == 0)
		_, err := c.ExecuteProcedure("bump", key(pk), true, args, ScriptEnv{})
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		return nil
	}
	doc := func(id string) []byte {
		words := []string{"red", "green", "blue", "running", "runs", "the"}
		text := words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
		return fmt.Appendf(nil, `{"id":%q,"pk":%q,"tenant":%q,"t":"x","n":%d,"s":"v%d","text":%q,"pad":%q}`,
			id, pk, tenant, rng.IntN(100), rng.IntN(5), text, bytes.Repeat([]byte("p"), rng.IntN(600)))
	}
	op := func() (Op, error) {
		id := fmt.Sprint("i", rng.IntN(30))
		kind := []OpKind{OpCreate, OpUpsert, OpReplace, OpDelete, OpPatch, OpPatch}[rng.IntN(6)]
		hdr := key(pk)
		switch c.Info().ID {
		case "h":
			hdr = epk.Key{epk.String(tenant), epk.String(pk)}
		case "s":
			hdr = key("x-" + pk)
		}
		switch kind {
		case OpDelete, OpPatch:
			o, err := c.PrepareKeyed(kind, id, hdr, true)
			if kind == OpPatch {
				o.Patch = []jsondoc.PatchOp{{Op: "incr", Path: "/n", Value: json.RawMessage(`1`)}, {Op: "set", Path: "/q", Value: json.RawMessage(`"y"`)}}
				if rng.IntN(2) == 0 {
					o.Condition = fmt.Sprintf("FROM c WHERE c.n > %d", rng.IntN(100))
				}
			}
			return o, err
		}
		return c.PrepareWrite(kind, doc(id), hdr, true)
	}
	var cmd Command
	switch rng.IntN(4) {
	case 0:
		cmd.Atomic = true
		fallthrough
	case 1:
		for range 1 + rng.IntN(4) {
			o, err := op()
			if err != nil {
				return err
			}
			cmd.Ops = append(cmd.Ops, o)
		}
	default:
		o, err := op()
		if err != nil {
			return err
		}
		cmd.Ops = []Op{o}
	}
	_, _, err := c.Execute(&cmd, "")
	if errors.Is(err, ErrUnavailable) {
		return err
	}
	return nil // a failed operation or batch is part of the workload
}
