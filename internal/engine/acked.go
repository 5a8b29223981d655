package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/storage"
)

// AckedFile is the file, in the data directory, that records up to which
// LSN every partition's writes were acknowledged. It lives outside the
// write-ahead log it checks, so that a damaged, cut or deleted log is seen
// on open instead of the store starting silently without acknowledged
// writes:
//
//	{"version": 1, "seq": <id allocator high-water mark>,
//	 "partitions": [{"rid": <container rid>, "db": ..., "container": ...,
//	                 "range": <range id>, "lsn": <acknowledged LSN>}, ...]}
//
// The format is stable. The file is rewritten (write, sync, rename, sync
// the directory) every Options.AckedInterval and when the engine closes,
// never on the commit path, so it costs no sync per write. It only ever
// records LSNs whose commits had returned, which are durable, so a crash
// can leave it behind the store but never ahead of it: on open, a
// partition that holds less than its recorded LSN has lost acknowledged
// writes. Deleting a container drops its entries (and rewrites the file)
// before the deletion commits, and a split range is checked against its
// children, which start past its LSN.
const AckedFile = "parsec-acked.json"

// DefaultAckedInterval is how often the acknowledged LSNs are recorded.
const DefaultAckedInterval = time.Second

type ackedRecord struct {
	Version    int          `json:"version"`
	Seq        uint64       `json:"seq"`
	Partitions []ackedEntry `json:"partitions"`
}

type ackedEntry struct {
	Rid       string `json:"rid"`
	DB        string `json:"db"`
	Container string `json:"container"`
	Range     string `json:"range"`
	LSN       uint64 `json:"lsn"`
}

// snapshotAckedLocked returns the acknowledged state of every open
// container but those being deleted. The caller holds e.mu (either side).
func (e *Engine) snapshotAckedLocked() ackedRecord {
	rec := ackedRecord{Version: 1}
	e.seq.mu.Lock()
	rec.Seq = e.seq.limit
	e.seq.mu.Unlock()
	for _, db := range e.dbs {
		for _, c := range db.colls {
			if c.deleting {
				continue
			}
			info := c.Info()
			for _, p := range c.Partitions() {
				if lsn := p.LSN(); lsn > 0 {
					rec.Partitions = append(rec.Partitions, ackedEntry{Rid: info.Rid, DB: info.DB, Container: info.ID, Range: p.ID(), LSN: lsn})
				}
			}
		}
	}
	sort.Slice(rec.Partitions, func(i, j int) bool {
		a, b := rec.Partitions[i], rec.Partitions[j]
		if a.Rid != b.Rid {
			return a.Rid < b.Rid
		}
		return a.Range < b.Range
	})
	return rec
}

// writeAcked records the acknowledged state now. Writes are serialized and
// each takes its snapshot under the lock, so a later write never records
// an older state, nor a container whose deletion has begun.
func (e *Engine) writeAcked() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.writeAckedLocked()
}

// writeAckedLocked is writeAcked for a caller that holds e.mu (either
// side), which is taken before e.ackedMu.
func (e *Engine) writeAckedLocked() error {
	e.ackedMu.Lock()
	defer e.ackedMu.Unlock()
	if !e.ackedOn {
		return nil
	}
	v, err := json.Marshal(e.snapshotAckedLocked())
	if err != nil {
		// The record holds strings and integers only, which always encode.
		panic("BUG: cannot encode the acknowledged LSNs: " + err.Error())
	}
	if string(v) == string(e.ackedLast) {
		return nil
	}
	if err := e.store.WriteFile(AckedFile, v); err != nil {
		return fmt.Errorf("cannot record the acknowledged LSNs: %w", err)
	}
	e.ackedLast = v
	return nil
}

// recordAcked rewrites the record every interval until stop is closed.
func (e *Engine) recordAcked(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	every(interval, stop, done, func() {
		if err := e.writeAcked(); err != nil {
			e.opts.Logf("parsec: %v", err)
		}
	})
}

// every calls fn each interval until stop is closed, then closes done.
func every(interval time.Duration, stop <-chan struct{}, done chan<- struct{}, fn func()) {
	defer close(done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			fn()
		}
	}
}

// ackedGap is a partition that holds less than was acknowledged.
type ackedGap struct {
	entry ackedEntry
	found uint64
	// missing says the container itself is gone.
	missing bool
}

func (g ackedGap) String() string {
	if g.missing {
		return fmt.Sprintf("container %q/%q (rid %s) is missing, with the writes acknowledged up to LSN %d of its partition key range %s",
			g.entry.DB, g.entry.Container, g.entry.Rid, g.entry.LSN, g.entry.Range)
	}
	return fmt.Sprintf("container %q/%q partition key range %s: acknowledged up to LSN %d, found LSN %d (%d acknowledged writes lost)",
		g.entry.DB, g.entry.Container, g.entry.Range, g.entry.LSN, g.found, g.entry.LSN-g.found)
}

// checkAcked compares the store with the recorded acknowledged state. It
// returns what is missing: partition gaps, and whether the id allocator's
// mark (a catalog write) is behind.
func (e *Engine) checkAcked() (gaps []ackedGap, seqBehind string, err error) {
	v, err := e.store.ReadFile(AckedFile)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var rec ackedRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, "", fmt.Errorf("cannot decode %s: %w", AckedFile, err)
	}
	if rec.Version != 1 {
		return nil, "", fmt.Errorf("cannot read %s: version %d is not known", AckedFile, rec.Version)
	}
	if e.logKeepsEntries() {
		// A replicated partition's acknowledged writes are in its raft
		// log, synced before they were acknowledged; its applied state is
		// committed without a sync, and what a crash took of it is applied
		// again from the log once the replication host starts. The catalog
		// and the id allocator, when replicated, likewise.
		return nil, "", nil
	}
	byRid := map[string]*Container{}
	for _, db := range e.dbs {
		for _, c := range db.colls {
			byRid[c.Info().Rid] = c
		}
	}
	for _, ent := range rec.Partitions {
		c, ok := byRid[ent.Rid]
		if !ok {
			// With a replicated catalog, the meta group's log says which
			// containers exist: a deletion applied from it may reach the
			// store before this record forgets the container (the
			// reconciler writes it after).
			if !e.catalogKeepsEntries() {
				gaps = append(gaps, ackedGap{entry: ent, missing: true})
			}
			continue
		}
		found, any := uint64(0), false
		for _, p := range c.parts {
			// The range itself, or the ranges it split into: each child
			// starts at its parent's LSN.
			if p.info.ID != ent.Range && !containsString(p.info.Parents, ent.Range) {
				continue
			}
			if lsn := p.LSN(); !any || lsn < found {
				found = lsn
			}
			any = true
		}
		if found < ent.LSN {
			gaps = append(gaps, ackedGap{entry: ent, found: found})
		}
	}
	if e.seq.limit < rec.Seq {
		seqBehind = fmt.Sprintf("the catalog's id allocator is at %d, behind the recorded %d (database or container changes are lost)", e.seq.limit, rec.Seq)
	}
	return gaps, seqBehind, nil
}

func containsString(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// verifyAcked refuses to open a store that holds less than it acknowledged
// (storage.ErrDataLoss), or with Options.AcceptDataLoss logs what was lost
// and records the state found, so that the next open starts from it.
func (e *Engine) verifyAcked() error {
	gaps, seqBehind, err := e.checkAcked()
	if err != nil && !e.opts.AcceptDataLoss {
		return fmt.Errorf("cannot check the acknowledged writes: %w", err)
	}
	var what []string
	if err != nil {
		what = append(what, err.Error())
	}
	for _, g := range gaps {
		what = append(what, g.String())
	}
	if seqBehind != "" {
		what = append(what, seqBehind)
	}
	if len(what) > 0 && !e.opts.AcceptDataLoss {
		return fmt.Errorf("%w: the store holds less than it acknowledged, so its write-ahead log is damaged or missing (%s): %s",
			storage.ErrDataLoss, e.store.WALFiles(), strings.Join(what, "; "))
	}
	e.ackedMu.Lock()
	e.ackedOn = true
	e.ackedMu.Unlock()
	if len(what) > 0 {
		for _, w := range what {
			e.opts.Logf("parsec: DATA LOSS accepted: %s", w)
		}
		return e.writeAcked()
	}
	return nil
}
