package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/parsecdb/parsec/internal/lincheck"
	"github.com/parsecdb/parsec/internal/replication/transport"
	"github.com/parsecdb/parsec/internal/storage"
)

// register is a test state machine: registers by key, written by
// unconditional writes and compare-and-sets. A command is
// "id\x00key\x00expect\x00value\x00cas"; Apply records each command's
// outcome by id for the proposer on this node to read, and keeps the
// registers (with the applied index) in the store, so a restarted node
// starts from what it applied.
type register struct {
	key     []byte
	mu      sync.Mutex
	applied uint64
	vals    map[string]string
	results map[string]bool
}

type registerState struct {
	Applied uint64
	Vals    map[string]string
}

func loadRegister(db *storage.DB, key []byte) (*register, error) {
	r := &register{key: key, vals: map[string]string{}, results: map[string]bool{}}
	v, err := db.Get(nil, key)
	if errors.Is(err, storage.ErrNotFound) {
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	var st registerState
	if err := json.Unmarshal(v, &st); err != nil {
		return nil, err
	}
	r.applied = st.Applied
	if st.Vals != nil {
		r.vals = st.Vals
	}
	return r, nil
}

func (r *register) Applied() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applied
}

func (r *register) Apply(b *storage.Batch, ents []Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range ents {
		if e.Index != r.applied+1 {
			return fmt.Errorf("entry %d applied after %d", e.Index, r.applied)
		}
		r.applied = e.Index
		if e.Data == nil {
			continue
		}
		f := strings.Split(string(e.Data), "\x00")
		if len(f) != 5 {
			return fmt.Errorf("a command of %d fields", len(f))
		}
		id, key, expect, val, cas := f[0], f[1], f[2], f[3], f[4] == "1"
		ok := !cas || r.vals[key] == expect
		if ok {
			r.vals[key] = val
		}
		r.results[id] = ok
	}
	return r.save(b)
}

func (r *register) save(b *storage.Batch) error {
	v, err := json.Marshal(registerState{r.applied, r.vals})
	if err != nil {
		return err
	}
	return b.Set(r.key, v)
}

func (r *register) Snapshot() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return json.Marshal(registerState{r.applied, r.vals})
}

func (r *register) Restore(b *storage.Batch, index, term uint64, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := registerState{Applied: index}
	if data != nil {
		if err := json.Unmarshal(data, &st); err != nil {
			return err
		}
	}
	r.applied, r.vals = index, maps.Clone(st.Vals)
	if r.vals == nil {
		r.vals = map[string]string{}
	}
	return r.save(b)
}

// read returns a register's value once the state machine has applied
// index, or false if it has not yet.
func (r *register) read(index uint64, key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.vals[key], r.applied >= index
}

func (r *register) result(id string) (bool, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok, found := r.results[id]
	return ok, found
}

// TestLinearizableUnderFaults runs concurrent writes, compare-and-sets and
// ReadIndex reads of a few registers on one group of three nodes while the
// network drops, duplicates and delays messages, the leader is isolated and
// healed, and nodes are stopped and restarted from their stores (with a
// small snapshot interval, so restarts catch up by snapshot too), and
// checks the history for linearizability (package lincheck) over several
// seeds. An operation whose proposal failed ambiguously (a lost
// leadership, ErrAmbiguous, which also names the new leader; a timeout; a
// stopped node) may or may not have taken effect; one refused outright by
// a follower (a NotLeaderError alone) did not.
func TestLinearizableUnderFaults(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { testLinearizable(t, seed) })
	}
}

func testLinearizable(t *testing.T, seed uint64) {
	var regsMu sync.Mutex
	regs := map[uint64]*register{} // by node, of the group
	const g = 100
	c := newClusterOn(t, 1, nil, memStore, true)
	c.mod = func(cfg *Config) {
		cfg.SnapshotEntries, cfg.Logf = 16, func(string, ...any) {}
		id, db := cfg.NodeID, c.nodes[cfg.NodeID].db
		cfg.NewStateMachine = func(uint64) (StateMachine, error) {
			r, err := loadRegister(db, []byte("test-register"))
			regsMu.Lock()
			regs[id] = r
			regsMu.Unlock()
			return r, err
		}
	}
	// Restart every node with the register state machine.
	for _, id := range voters {
		c.stop(id)
		c.start(id)
	}
	c.net.SetFaults(transport.Faults{Drop: 0.02, Duplicate: 0.02})
	var stop atomic.Bool
	var ticking sync.WaitGroup
	var nodesMu sync.RWMutex // held to read c.nodes[id].h; written by the fault loop
	ticking.Add(1)
	go func() {
		defer ticking.Done()
		for !stop.Load() {
			nodesMu.RLock()
			c.tick()
			nodesMu.RUnlock()
			time.Sleep(500 * time.Microsecond)
		}
	}()
	hostOf := func(id uint64) *Host {
		nodesMu.RLock()
		defer nodesMu.RUnlock()
		return c.nodes[id].h
	}
	regOf := func(id uint64) *register {
		regsMu.Lock()
		defer regsMu.Unlock()
		return regs[id]
	}
	rec := lincheck.NewRecorder()
	keys := []string{"a", "b", "c"}
	var clients sync.WaitGroup
	var nextID atomic.Uint64
	var faultsDone atomic.Bool // the clients run until the faults are over
	for cl := range 4 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(cl)))
			lastSeen := map[string]string{}
			id := uint64(1 + rng.IntN(3)) // the node this client talks to
			deadline := time.Now().Add(time.Minute)
			// refused sends the client to the leader a refusal names, or
			// to another node, and has it try again.
			refused := func(nl *NotLeaderError) {
				if nl != nil && nl.Leader != 0 {
					id = nl.Leader
				} else {
					id = uint64(1 + rng.IntN(3))
					time.Sleep(time.Millisecond)
				}
			}
			for i := 0; !faultsDone.Load() && time.Now().Before(deadline); i++ {
				h := hostOf(id)
				if h == nil {
					refused(nil)
					i--
					continue
				}
				key := keys[rng.IntN(len(keys))]
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				call := rec.Now()
				switch op := rng.IntN(3); op {
				case 0: // a linearizable read: ReadIndex, then the local state once applied
					idx, err := h.ReadIndex(ctx, g)
					if err != nil {
						// A failed read has no effect: try again.
						var nl *NotLeaderError
						errors.As(err, &nl)
						refused(nl)
						i--
						break
					}
					r := regOf(id)
					for {
						v, ok := r.read(idx, key)
						if ok {
							rec.Add(cl, lincheck.Input{Key: key, Kind: lincheck.Read}, call, lincheck.Output{Value: v})
							lastSeen[key] = v
							break
						}
						if ctx.Err() != nil {
							break
						}
						time.Sleep(100 * time.Microsecond)
					}
				default:
					pid := fmt.Sprint(nextID.Add(1))
					val := fmt.Sprintf("c%d-%d", cl, i)
					in := lincheck.Input{Key: key, Kind: lincheck.Write, Value: val}
					cas := "0"
					if op == 2 {
						in.Kind, in.Expect, cas = lincheck.CAS, lastSeen[key], "1"
					}
					_, err := h.Propose(ctx, g, []byte(strings.Join([]string{pid, key, in.Expect, val, cas}, "\x00")))
					var nl *NotLeaderError
					switch {
					case !errors.Is(err, ErrAmbiguous) && errors.As(err, &nl):
						// Refused before it entered the log: no effect.
						refused(nl)
						i--
					case err != nil:
						rec.Add(cl, in, call, lincheck.Output{Unknown: true})
					default:
						ok, found := regOf(id).result(pid)
						if !found {
							t.Errorf("node %d applied proposal %s without recording its outcome", id, pid)
						}
						rec.Add(cl, in, call, lincheck.Output{OK: ok})
					}
				}
				cancel()
			}
		}()
	}
	// Faults while the clients run: isolate a node (most often the
	// leader) and heal; stop a node and restart it from its store.
	frng := rand.New(rand.NewPCG(seed, 99))
	leader := func() uint64 {
		for _, id := range voters {
			if h := hostOf(id); h != nil {
				if st, err := h.Status(g); err == nil && st.Lead != 0 {
					return st.Lead
				}
			}
		}
		return 0
	}
	// progress waits until the clients have recorded n more operations,
	// so that every seed checks about as many whatever the machine's speed.
	progress := func(n int) {
		if !rec.Await(n, time.Minute) {
			t.Errorf("the clients made no progress for a minute (%d operations)", rec.Len())
		}
	}
	term := func() uint64 {
		var max uint64
		for _, id := range voters {
			if h := hostOf(id); h != nil {
				if st, err := h.Status(g); err == nil && st.GetTerm() > max {
					max = st.GetTerm()
				}
			}
		}
		return max
	}
	term0 := term()
	for round := range 12 {
		progress(20 + frng.IntN(40))
		victim := uint64(1 + frng.IntN(3))
		if l := leader(); l != 0 && frng.IntN(3) > 0 {
			victim = l
		}
		if round%2 == 0 {
			c.net.Isolate(victim)
			time.Sleep(time.Duration(10+frng.IntN(40)) * time.Millisecond)
			c.net.Heal()
			continue
		}
		nodesMu.Lock()
		c.stop(victim)
		nodesMu.Unlock()
		time.Sleep(time.Duration(5+frng.IntN(30)) * time.Millisecond)
		nodesMu.Lock()
		c.start(victim)
		nodesMu.Unlock()
	}
	progress(40) // operations after the last fault
	faultsDone.Store(true)
	clients.Wait()
	elections := term() - term0
	stop.Store(true)
	ticking.Wait()
	if elections < 3 {
		t.Fatalf("the term rose by %d during the faults: too few elections to test failover", elections)
	}
	h, known := rec.History(), rec.Known()
	if res := lincheck.Check(h, time.Minute); res != porcupine.Ok {
		t.Fatalf("the history of %d operations (%d with a known outcome) is %s", len(h), known, res)
	}
	if known < 400 || known < len(h)/2 {
		t.Fatalf("only %d of %d operations have a known outcome: the faults leave too little to check", known, len(h))
	}
	t.Logf("%d operations, %d with a known outcome, %d terms", len(h), known, elections)
}
