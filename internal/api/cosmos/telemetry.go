package cosmos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parsecdb/parsec/internal/auth"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// MetricsPath serves Prometheus metrics: the primary or read-only key is
// required unless Config.MetricsPublic is set (see serveMetrics).
const MetricsPath = "/metrics"

// hotKeysShown is how many hot keys per partition the endpoints report.
const hotKeysShown = 5

// ContainerTelemetry is the JSON of GET /dbs/{db}/colls/{c}/partitions: the
// partition map with each partition's budget, consumption, storage and hot
// keys. `parsec partitions` prints it as a table.
type ContainerTelemetry struct {
	Database     string               `json:"database"`
	Container    string               `json:"container"`
	Throughput   int                  `json:"throughput"`
	AutoscaleMax int                  `json:"autoscaleMaxThroughput,omitempty"`
	Shared       bool                 `json:"sharedThroughput"`
	Partitions   []PartitionTelemetry `json:"partitions"`
}

// PartitionTelemetry is the JSON of one physical partition in
// ContainerTelemetry (engine.PartitionStats on the wire).
type PartitionTelemetry struct {
	ID           string   `json:"id"`
	MinInclusive string   `json:"minInclusive"`
	MaxExclusive string   `json:"maxExclusive"`
	Parents      []string `json:"parents"`
	BudgetRUs    float64  `json:"budgetRUs"`
	ConsumedRUs  float64  `json:"consumedRUs"`
	Throttled    uint64   `json:"throttled"`
	Bytes        int64    `json:"storageBytes"`
	Items        int64    `json:"itemCount"`
	LSN          uint64   `json:"lsn"`
	// Node, Leader and Replicas are set in a cluster: the node that
	// answered (whose replica the figures are), the partition's leader and
	// its replicas. Writes are metered on the leader, reads on the node
	// that serves them.
	Node       uint64      `json:"node,omitempty"`
	Leader     uint64      `json:"leader,omitempty"`
	Replicas   []uint64    `json:"replicas,omitempty"`
	HotByRU    []KeyWeight `json:"topKeysByRU"`
	HotByBytes []KeyWeight `json:"topKeysByStorage"`
}

// KeyWeight is the JSON of a hot logical partition key: the key (its JSON
// text) and its weight, RU or bytes.
type KeyWeight struct {
	Key    string  `json:"key"`
	Weight float64 `json:"value"`
}

// partitionTelemetry renders an engine partition's statistics.
func partitionTelemetry(s engine.PartitionStats) PartitionTelemetry {
	return PartitionTelemetry{ID: s.ID, MinInclusive: s.MinInclusive, MaxExclusive: s.MaxExclusive, Parents: s.Parents,
		BudgetRUs: s.BudgetRUs, ConsumedRUs: s.ConsumedRUs, Throttled: s.Throttled, Bytes: s.Bytes, Items: s.Items, LSN: s.LSN,
		HotByRU: keyWeights(s.HotByRU), HotByBytes: keyWeights(s.HotByBytes)}
}

// keyWeights renders hot keys; nil stays nil (JSON null), as before the
// wire shape moved here.
func keyWeights(in []engine.KeyWeight) []KeyWeight {
	if in == nil {
		return nil
	}
	out := make([]KeyWeight, len(in))
	for i, k := range in {
		out[i] = KeyWeight{Key: k.Key, Weight: k.Weight}
	}
	return out
}

func (s *Server) partitionStats(req *request, dbID, collID string) error {
	req.charge = throughput.MetadataCharge
	c, err := s.openContainer(req, dbID, collID)
	if err != nil {
		return err
	}
	t, err := containerTelemetry(dbID, c)
	if err != nil {
		return err
	}
	if n := s.cfg.Cluster; n != nil {
		parts := partitionsByID(c)
		for i := range t.Partitions {
			p := &t.Partitions[i]
			p.Node = n.ID()
			if part := parts[p.ID]; part != nil {
				p.Leader, p.Replicas, _ = n.Status(part.GroupID())
				slices.Sort(p.Replicas)
			}
		}
	}
	body, _ := json.Marshal(t)
	s.writeJSON(req, http.StatusOK, body)
	return nil
}

func containerTelemetry(dbID string, c *engine.Container) (ContainerTelemetry, error) {
	info := c.Info()
	stats, err := c.Stats(hotKeysShown)
	var parts []PartitionTelemetry
	if stats != nil {
		parts = make([]PartitionTelemetry, len(stats))
		for i, p := range stats {
			parts[i] = partitionTelemetry(p)
		}
	}
	return ContainerTelemetry{Database: dbID, Container: info.ID, Throughput: info.Throughput, AutoscaleMax: info.AutoscaleMax,
		Shared: info.Throughput == 0 && info.AutoscaleMax == 0, Partitions: parts}, err
}

// partitionsByID indexes c's partitions by range id, for the telemetry
// that names each partition's replica state.
func partitionsByID(c *engine.Container) map[string]*engine.Partition {
	parts := c.Partitions()
	m := make(map[string]*engine.Partition, len(parts))
	for _, p := range parts {
		m[p.ID()] = p
	}
	return m
}

// DefaultMetricsRefresh is how long a /metrics snapshot is served before
// the next scrape rebuilds it.
const DefaultMetricsRefresh = 5 * time.Second

// MaxMetricsBytes bounds a /metrics snapshot: once the text of the
// partitions walked reaches it, the remaining partitions are not walked and
// parsec_metrics_partitions_omitted counts them.
const MaxMetricsBytes = 4 << 20

// metricsSnapshot is one rendering of the partition telemetry, shared by
// every scrape until it is older than the refresh period.
type metricsSnapshot struct {
	at time.Time
	// full has the hot-key families, whose labels are partition key
	// values; public omits them.
	full, public []byte
}

// metricsCache holds the current snapshot. mu is held by the one scrape
// that rebuilds it; the others serve the previous snapshot meanwhile.
type metricsCache struct {
	mu   sync.Mutex
	snap atomic.Pointer[metricsSnapshot]
	// walks counts rebuilds, each a walk of every partition's logical
	// partition records.
	walks atomic.Int64
}

// serveMetrics answers GET /metrics. Unless the server was configured with
// MetricsPublic, the request must carry the primary or the read-only key,
// either as "Authorization: Bearer <base64 key>" (what a Prometheus scraper
// can send) or as a normal master-key signature of GET with resource type
// "metrics" and an empty link. With MetricsPublic, a request without an
// Authorization header gets the snapshot without hot keys; one with a key
// gets everything.
func (s *Server) serveMetrics(req *request) {
	r := req.r
	if r.Method != http.MethodGet {
		s.writeError(req, errMethod(r.Method, MetricsPath))
		return
	}
	h := r.Header.Get("Authorization")
	switch {
	case h == "" && s.cfg.MetricsPublic:
		s.writeMetrics(req, s.metricsSnapshot().public)
		return
	case len(h) > len("Bearer ") && strings.EqualFold(h[:len("Bearer ")], "Bearer "):
		if s.verifier.VerifyKey(h[len("Bearer "):]) == auth.NoAccess {
			req.w.Header().Set("WWW-Authenticate", `Bearer realm="parsec"`)
			s.writeError(req, errUnauthorized("the bearer token of %s is neither the primary nor the read-only key", MetricsPath))
			return
		}
	default:
		if err := s.authenticate(req, operation{kind: opReadMetrics}); err != nil {
			req.w.Header().Set("WWW-Authenticate", `Bearer realm="parsec"`)
			s.writeError(req, err)
			return
		}
	}
	s.writeMetrics(req, s.metricsSnapshot().full)
}

// writeMetrics sends a snapshot followed by the live process gauges, which
// cost nothing to read and so are never stale.
func (s *Server) writeMetrics(req *request, body []byte) {
	req.w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	req.w.WriteHeader(http.StatusOK)
	_, _ = req.w.Write(body)
	_, _ = fmt.Fprintf(req.w, "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
}

// metricsSnapshot returns a snapshot at most MetricsRefresh old by the
// server clock. At most one goroutine rebuilds it at a time, so however
// many scrapers there are, the partitions are walked at most once per
// period; scrapers that arrive during a rebuild get the previous snapshot,
// and only the very first scrapes wait for one.
func (s *Server) metricsSnapshot() *metricsSnapshot {
	m := &s.metrics
	fresh := func(sn *metricsSnapshot) bool {
		if sn == nil {
			return false
		}
		age := s.cfg.Now().Sub(sn.at)
		return age >= 0 && age < s.cfg.MetricsRefresh
	}
	if sn := m.snap.Load(); fresh(sn) {
		return sn
	}
	if !m.mu.TryLock() {
		if sn := m.snap.Load(); sn != nil {
			return sn
		}
		m.mu.Lock()
	}
	defer m.mu.Unlock()
	if sn := m.snap.Load(); fresh(sn) {
		return sn
	}
	m.walks.Add(1)
	sn := s.buildMetrics()
	m.snap.Store(sn)
	return sn
}

// buildMetrics renders every container's partition telemetry in the
// Prometheus text format, up to MaxMetricsBytes.
func (s *Server) buildMetrics() *metricsSnapshot {
	type family struct {
		name, typ, help string
		hot             bool // labelled with partition key values
	}
	fams := []family{
		{"parsec_partition_consumed_request_units_total", "counter", "Request units charged to the physical partition.", false},
		{"parsec_partition_throttled_requests_total", "counter", "Requests answered 429 because the partition's budget was exhausted.", false},
		{"parsec_partition_budget_request_units_per_second", "gauge", "The partition's provisioned throughput share.", false},
		{"parsec_partition_storage_bytes", "gauge", "Bytes stored in the partition.", false},
		{"parsec_partition_items", "gauge", "Items stored in the partition.", false},
		{"parsec_partition_hot_key_request_units", "gauge", "Recent request units of the partition's hottest logical keys (decaying).", true},
		{"parsec_partition_hot_key_storage_bytes", "gauge", "Bytes of the partition's largest logical keys.", true},
		{"parsec_partition_applied_lsn", "gauge", "The LSN this node's replica of the partition has applied.", false},
		{"parsec_partition_leader", "gauge", "1 if this node leads the partition (always, on a single node), 0 if its replica follows.", false},
	}
	at := s.cfg.Now()
	lines := make([][]string, len(fams))
	size, omitted := 0, 0
	add := func(i int, l string) {
		lines[i] = append(lines[i], l)
		size += len(l) + 1
	}
	s.engine.EachContainer(func(db string, c *engine.Container) {
		if size >= MaxMetricsBytes {
			omitted += len(c.Partitions())
			return
		}
		t, err := containerTelemetry(db, c)
		if err != nil {
			return
		}
		parts := partitionsByID(c)
		for _, p := range t.Partitions {
			if size >= MaxMetricsBytes {
				omitted++
				continue
			}
			l := fmt.Sprintf(`database="%s",container="%s",range="%s"`, esc(db), esc(t.Container), esc(p.ID))
			add(0, fmt.Sprintf("%s{%s} %g", fams[0].name, l, p.ConsumedRUs))
			add(1, fmt.Sprintf("%s{%s} %d", fams[1].name, l, p.Throttled))
			add(2, fmt.Sprintf("%s{%s} %g", fams[2].name, l, p.BudgetRUs))
			add(3, fmt.Sprintf("%s{%s} %d", fams[3].name, l, p.Bytes))
			add(4, fmt.Sprintf("%s{%s} %d", fams[4].name, l, p.Items))
			for i, k := range p.HotByRU {
				add(5, fmt.Sprintf(`%s{%s,rank="%d",key="%s"} %g`, fams[5].name, l, i+1, esc(k.Key), k.Weight))
			}
			for i, k := range p.HotByBytes {
				add(6, fmt.Sprintf(`%s{%s,rank="%d",key="%s"} %g`, fams[6].name, l, i+1, esc(k.Key), k.Weight))
			}
			if part := parts[p.ID]; part != nil {
				leads := 1
				if n := s.cfg.Cluster; n != nil && !n.Leads(part.GroupID()) {
					leads = 0
				}
				add(7, fmt.Sprintf("%s{%s} %d", fams[7].name, l, part.LSN()))
				add(8, fmt.Sprintf("%s{%s} %d", fams[8].name, l, leads))
			}
		}
	})
	var full, public bytes.Buffer
	for i, f := range fams {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, l := range lines[i] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		full.Write(b.Bytes())
		if !f.hot {
			public.Write(b.Bytes())
		}
	}
	tail := fmt.Sprintf("# HELP parsec_metrics_partitions_omitted Partitions left out of this page to bound its size (%d bytes).\n"+
		"# TYPE parsec_metrics_partitions_omitted gauge\nparsec_metrics_partitions_omitted %d\n", MaxMetricsBytes, omitted)
	if n := s.cfg.Cluster; n != nil {
		st := n.RaftStats()
		for _, m := range []struct {
			name, help string
			v          uint64
		}{
			{"parsec_raft_snapshots_installed_total", "Snapshots this node's replicas installed (a replica behind its leader's truncated log catches up by one).", st.Restores},
			{"parsec_raft_snapshot_bytes_sent_total", "Bytes of partition snapshots this node streamed to other replicas.", st.SnapshotBytesSent},
			{"parsec_raft_snapshot_bytes_received_total", "Bytes of partition snapshots this node's replicas received.", st.SnapshotBytesReceived},
			{"parsec_bounded_reads_local_total", "Bounded-staleness reads this node served from its replicas as they stood (their lag within the bounds).", uint64(s.gw.Stats().BoundedReadsLocal)},
			{"parsec_bounded_reads_leader_total", "Bounded-staleness reads for which this node asked a partition's leader (a ReadIndex), a replica's lag being unknown or past the bounds.", uint64(s.gw.Stats().BoundedReadsLeader)},
		} {
			tail += fmt.Sprintf("# HELP %s %s\n# TYPE %s counter\n%s %d\n", m.name, m.help, m.name, m.name, m.v)
		}
	}
	full.WriteString(tail)
	public.WriteString(tail)
	return &metricsSnapshot{at: at, full: full.Bytes(), public: public.Bytes()}
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func esc(s string) string { return labelEscaper.Replace(s) }
