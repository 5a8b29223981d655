package cosmos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// MetricsPath serves Prometheus metrics without authentication.
const MetricsPath = "/metrics"

// hotKeysShown is how many hot keys per partition the endpoints report.
const hotKeysShown = 5

// ContainerTelemetry is the JSON of GET /dbs/{db}/colls/{c}/partitions: the
// partition map with each partition's budget, consumption, storage and hot
// keys. `parsec partitions` prints it as a table.
type ContainerTelemetry struct {
	Database     string                  `json:"database"`
	Container    string                  `json:"container"`
	Throughput   int                     `json:"throughput"`
	AutoscaleMax int                     `json:"autoscaleMaxThroughput,omitempty"`
	Shared       bool                    `json:"sharedThroughput"`
	Partitions   []engine.PartitionStats `json:"partitions"`
}

func (s *Server) partitionStats(req *request, dbID, collID string) {
	if req.r.Method != http.MethodGet {
		s.writeError(req, errMethod(req.r.Method, "partition statistics"))
		return
	}
	req.charge = throughput.MetadataCharge
	c, err := s.openContainer(req, dbID, collID)
	if err != nil {
		s.writeError(req, err)
		return
	}
	t, err := containerTelemetry(dbID, c)
	if err != nil {
		s.writeError(req, err)
		return
	}
	body, _ := json.Marshal(t)
	s.writeJSON(req, http.StatusOK, body)
}

func containerTelemetry(dbID string, c *engine.Container) (ContainerTelemetry, error) {
	info := c.Info()
	stats, err := c.Stats(hotKeysShown)
	return ContainerTelemetry{Database: dbID, Container: info.ID, Throughput: info.Throughput, AutoscaleMax: info.AutoscaleMax,
		Shared: info.Throughput == 0 && info.AutoscaleMax == 0, Partitions: stats}, err
}

// metrics writes every container's partition telemetry in the Prometheus
// text format. Hot keys appear as labels: they are partition key values, so
// expose this endpoint only where those may be seen.
func (s *Server) metrics(w http.ResponseWriter) {
	var b strings.Builder
	type family struct{ name, typ, help string }
	fams := []family{
		{"parsec_partition_consumed_request_units_total", "counter", "Request units charged to the physical partition."},
		{"parsec_partition_throttled_requests_total", "counter", "Requests answered 429 because the partition's budget was exhausted."},
		{"parsec_partition_budget_request_units_per_second", "gauge", "The partition's provisioned throughput share."},
		{"parsec_partition_storage_bytes", "gauge", "Bytes stored in the partition."},
		{"parsec_partition_items", "gauge", "Items stored in the partition."},
		{"parsec_partition_hot_key_request_units", "gauge", "Recent request units of the partition's hottest logical keys (decaying)."},
		{"parsec_partition_hot_key_storage_bytes", "gauge", "Bytes of the partition's largest logical keys."},
	}
	lines := make([][]string, len(fams))
	s.engine.EachContainer(func(db string, c *engine.Container) {
		t, err := containerTelemetry(db, c)
		if err != nil {
			return
		}
		for _, p := range t.Partitions {
			l := fmt.Sprintf(`database="%s",container="%s",range="%s"`, esc(db), esc(t.Container), esc(p.ID))
			lines[0] = append(lines[0], fmt.Sprintf("%s{%s} %g", fams[0].name, l, p.ConsumedRUs))
			lines[1] = append(lines[1], fmt.Sprintf("%s{%s} %d", fams[1].name, l, p.Throttled))
			lines[2] = append(lines[2], fmt.Sprintf("%s{%s} %g", fams[2].name, l, p.BudgetRUs))
			lines[3] = append(lines[3], fmt.Sprintf("%s{%s} %d", fams[3].name, l, p.Bytes))
			lines[4] = append(lines[4], fmt.Sprintf("%s{%s} %d", fams[4].name, l, p.Items))
			for i, k := range p.HotByRU {
				lines[5] = append(lines[5], fmt.Sprintf(`%s{%s,rank="%d",key="%s"} %g`, fams[5].name, l, i+1, esc(k.Key), k.Weight))
			}
			for i, k := range p.HotByBytes {
				lines[6] = append(lines[6], fmt.Sprintf(`%s{%s,rank="%d",key="%s"} %g`, fams[6].name, l, i+1, esc(k.Key), k.Weight))
			}
		}
	})
	for i, f := range fams {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.typ)
		for _, l := range lines[i] {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "# HELP go_goroutines Number of goroutines that currently exist.\n# TYPE go_goroutines gauge\ngo_goroutines %d\n", runtime.NumGoroutine())
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func esc(s string) string { return labelEscaper.Replace(s) }
