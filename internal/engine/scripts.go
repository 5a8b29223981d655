package engine

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/parsecdb/parsec/internal/script"
	"github.com/parsecdb/parsec/internal/storage"
)

// ScriptKind is the kind of a container's server-side script.
type ScriptKind byte

// The script kinds. The values are stored in script keys: never renumber.
const (
	StoredProcedure ScriptKind = 1
	Trigger         ScriptKind = 2
	UserFunction    ScriptKind = 3
)

var scriptKindNames = [...]string{"", "stored procedure", "trigger", "user-defined function"}

func (k ScriptKind) String() string {
	if int(k) < len(scriptKindNames) {
		return scriptKindNames[k]
	}
	return fmt.Sprintf("ScriptKind(%d)", k)
}

// Trigger types and operations, as Cosmos spells them.
const (
	TriggerPre  = "Pre"
	TriggerPost = "Post"
)

var triggerOperations = []string{"All", "Create", "Update", "Delete", "Replace", "Upsert"}

// canonicalName returns the name of names that v spells in any case: the
// service reads enumerated values case-insensitively (the JavaScript SDK
// sends "pre", "all", "read").
func canonicalName(v string, names ...string) (string, bool) {
	for _, n := range names {
		if strings.EqualFold(v, n) {
			return n, true
		}
	}
	return v, false
}

// MaxScriptBytes is the longest script body accepted (Cosmos's limit is
// 256 KB per stored procedure, trigger or user-defined function).
const MaxScriptBytes = 256 << 10

// ScriptSpec is what a client gives to create or replace a script.
type ScriptSpec struct {
	ID   string
	Body string
	// TriggerType (Pre or Post) and TriggerOperation (All, Create,
	// Replace, Delete, ...) are a trigger's.
	TriggerType      string
	TriggerOperation string
}

// ScriptInfo is a script's stored record. Its JSON tags are the stored
// format, not a wire format: never rename one.
type ScriptInfo struct {
	Kind             ScriptKind `json:"kind"`
	ID               string     `json:"id"`
	Body             string     `json:"body"`
	TriggerType      string     `json:"triggerType,omitempty"`
	TriggerOperation string     `json:"triggerOperation,omitempty"`
	Rid              string     `json:"rid"`
	Ts               int64      `json:"ts"`
	// Seq is the sequence number of this version: the etag derives from
	// it, and compiled programs are cached by it.
	Seq uint64 `json:"seq"`
}

// Etag is the script version's etag.
func (s ScriptInfo) Etag() string { return etagOf(s.Seq) }

// Self is the script's _self link within container info.
func (s ScriptInfo) Self(info ContainerInfo) string {
	rid, _ := decodeRid(info.Rid)
	seg := map[ScriptKind]string{StoredProcedure: "sprocs", Trigger: "triggers", UserFunction: "udfs"}[s.Kind]
	return "dbs/" + encodeRid(rid[:4]) + "/colls/" + info.Rid + "/" + seg + "/" + s.Rid + "/"
}

func validateScript(kind ScriptKind, spec ScriptSpec) error {
	if err := validateResourceID(kind.String(), spec.ID); err != nil {
		return err
	}
	if spec.Body == "" {
		return badRequest("the %s %q has no body", kind, spec.ID)
	}
	if len(spec.Body) > MaxScriptBytes {
		return fmt.Errorf("%w: the body of %s %q is %d bytes; the limit is %d bytes", ErrTooLarge, kind, spec.ID, len(spec.Body), MaxScriptBytes)
	}
	if kind == Trigger {
		if _, ok := canonicalName(spec.TriggerType, TriggerPre, TriggerPost); !ok {
			return badRequest("the trigger %q has triggerType %q; it must be Pre or Post", spec.ID, spec.TriggerType)
		}
		if _, ok := canonicalName(spec.TriggerOperation, triggerOperations...); !ok {
			return badRequest("the trigger %q has triggerOperation %q; it must be All, Create, Replace, Upsert or Delete", spec.ID, spec.TriggerOperation)
		}
	} else if spec.TriggerType != "" || spec.TriggerOperation != "" {
		return badRequest("a %s has no triggerType or triggerOperation", kind)
	}
	// A body that is not a function is refused now, not at its first run.
	if _, err := script.Compile(spec.ID, spec.Body); err != nil {
		return badRequest("%v", err)
	}
	return nil
}

// ScriptQuota is how many scripts of each kind a container may hold, the
// service's quotas (reported in x-ms-resource-quota).
var ScriptQuota = map[ScriptKind]int{StoredProcedure: 100, Trigger: 25, UserFunction: 25}

// CreateScript creates a script of the container. It fails with
// ErrConflict if one of the same kind and id exists, and with
// ErrQuotaExceeded if the container holds ScriptQuota of its kind.
func (c *Container) CreateScript(kind ScriptKind, spec ScriptSpec) (ScriptInfo, error) {
	return c.putScript(kind, spec, false, "")
}

// ReplaceScript replaces a script's body (and a trigger's type and
// operation). ifMatch, when set, is the etag the current version must have.
func (c *Container) ReplaceScript(kind ScriptKind, spec ScriptSpec, ifMatch string) (ScriptInfo, error) {
	return c.putScript(kind, spec, true, ifMatch)
}

func (c *Container) putScript(kind ScriptKind, spec ScriptSpec, replace bool, ifMatch string) (ScriptInfo, error) {
	if err := validateScript(kind, spec); err != nil {
		return ScriptInfo{}, err
	}
	c.scriptMu.Lock()
	defer c.scriptMu.Unlock()
	cur, found, err := c.loadScript(kind, spec.ID)
	if err != nil {
		return ScriptInfo{}, err
	}
	if !replace && !found {
		if all, err := c.Scripts(kind); err != nil {
			return ScriptInfo{}, err
		} else if len(all) >= ScriptQuota[kind] {
			return ScriptInfo{}, fmt.Errorf("%w: container %q already has %d %ss, its quota", ErrQuotaExceeded, c.Info().ID, len(all), kind)
		}
	}
	switch {
	case !replace && found:
		return ScriptInfo{}, conflict("a %s with id %q already exists in container %q", kind, spec.ID, c.Info().ID)
	case replace && !found:
		return ScriptInfo{}, notFound("no %s with id %q in container %q", kind, spec.ID, c.Info().ID)
	case replace && ifMatch != "" && ifMatch != "*" && ifMatch != cur.Etag():
		return ScriptInfo{}, fmt.Errorf("%w: the %s's etag is %s, not %s", ErrPreconditionFailed, kind, cur.Etag(), ifMatch)
	}
	s, err := c.e.seq.take(1)
	if err != nil {
		return ScriptInfo{}, err
	}
	typ, _ := canonicalName(spec.TriggerType, TriggerPre, TriggerPost)
	op, _ := canonicalName(spec.TriggerOperation, triggerOperations...)
	info := ScriptInfo{Kind: kind, ID: spec.ID, Body: spec.Body, TriggerType: typ,
		TriggerOperation: op, Ts: c.e.now(), Seq: s}
	if found {
		info.Rid = cur.Rid
	} else {
		info.Rid = encodeRid(binary.BigEndian.AppendUint64(append([]byte(nil), c.rid[:]...), s))
	}
	v, err := json.Marshal(info)
	if err != nil {
		panic(fmt.Sprintf("BUG: cannot encode script record: %v", err))
	}
	m := &catalogBatch{seq: s}
	m.set(storage.ScriptKey(c.rid, byte(kind), spec.ID), v)
	if err := c.e.commitCatalog(m, "store "+kind.String()); err != nil {
		return ScriptInfo{}, err
	}
	return info, nil
}

// Script returns a script's record.
func (c *Container) Script(kind ScriptKind, id string) (ScriptInfo, error) {
	info, found, err := c.loadScript(kind, id)
	if err != nil {
		return ScriptInfo{}, err
	}
	if !found {
		return ScriptInfo{}, notFound("no %s with id %q in container %q", kind, id, c.Info().ID)
	}
	return info, nil
}

// DeleteScript deletes a script.
func (c *Container) DeleteScript(kind ScriptKind, id string) error {
	c.scriptMu.Lock()
	defer c.scriptMu.Unlock()
	if _, err := c.Script(kind, id); err != nil {
		return err
	}
	m := &catalogBatch{}
	m.delete(storage.ScriptKey(c.rid, byte(kind), id))
	if err := c.e.commitCatalog(m, "delete "+kind.String()); err != nil {
		return err
	}
	c.programs.mu.Lock()
	delete(c.programs.m, programKey{kind, id})
	c.programs.mu.Unlock()
	return nil
}

// Scripts lists the container's scripts of one kind, ordered by id.
func (c *Container) Scripts(kind ScriptKind) ([]ScriptInfo, error) {
	lo := storage.ScriptKindPrefix(c.rid, byte(kind))
	var out []ScriptInfo
	err := c.e.store.Iterate(lo, storage.PrefixEnd(lo), func(k, v []byte) (bool, error) {
		info, err := decodeScript(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, info)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: cannot list %ss: %v", ErrUnavailable, kind, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// loadScript reads a script's record from the catalog.
func (c *Container) loadScript(kind ScriptKind, id string) (ScriptInfo, bool, error) {
	k := storage.ScriptKey(c.rid, byte(kind), id)
	v, err := c.e.store.Get(nil, k)
	if err == storage.ErrNotFound {
		return ScriptInfo{}, false, nil
	}
	if err != nil {
		return ScriptInfo{}, false, fmt.Errorf("%w: cannot read %s: %v", ErrUnavailable, kind, err)
	}
	info, err := decodeScript(k, v)
	return info, err == nil, err
}

func decodeScript(k, v []byte) (ScriptInfo, error) {
	var info ScriptInfo
	if err := json.Unmarshal(v, &info); err != nil {
		return info, corrupt("the script record %q does not decode: %v", k, err)
	}
	return info, nil
}
