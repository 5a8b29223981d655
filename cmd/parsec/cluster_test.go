package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
)

// TestClusterStatus checks `parsec cluster status` on a server without
// cluster options: one live node holding and leading every partition of
// every container, with each partition's EPK range and applied LSN, as
// JSON with the documented field names and as tables; and a wrong key.
func TestClusterStatus(t *testing.T) {
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0", NoThrottle: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	e := s.Engine()
	if _, err := e.CreateDatabase("db", engine.Throughput{}); err != nil {
		t.Fatal(err)
	}
	for name, rus := range map[string]int{"big": 18000, "small": 400} {
		if _, err := e.CreateContainer("db", engine.ContainerSpec{ID: name, PartitionKey: epk.Definition{Kind: epk.Hash, Version: 2, Paths: []string{"/pk"}}}, engine.Throughput{RUs: rus}); err != nil {
			t.Fatal(err)
		}
	}
	small, _ := e.Container("db", "small")
	for i := range 5 {
		op, err := small.PrepareWrite(engine.OpCreate, []byte(fmt.Sprintf(`{"id":"%d","pk":"a"}`, i)), epk.Key{epk.String("a")}, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := small.Execute(&engine.Command{Ops: []engine.Op{op}}, ""); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"cluster", "status", "--endpoint", s.URL(), "--key", auth.EmulatorKey, "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var st struct {
		Nodes []struct {
			ID                            uint64
			Address, ClusterAddress       string
			Live                          bool
			PartitionsHeld, PartitionsLed int
		}
		Partitions []struct {
			Container, Range, MinInclusive, MaxExclusive string
			Replicas                                     []uint64
			Leader                                       uint64
			AppliedLsn                                   map[string]uint64
		}
	}
	raw := out.Bytes()
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"nodes"`, `"partitions"`, `"id"`, `"address"`, `"clusterAddress"`, `"live"`, `"container"`, `"range"`, `"minInclusive"`, `"maxExclusive"`, `"replicas"`, `"leader"`, `"appliedLsn"`} {
		if !bytes.Contains(raw, []byte(f)) {
			t.Errorf("the JSON has no %s field", f)
		}
	}
	if len(st.Nodes) != 1 || st.Nodes[0].ID != 1 || !st.Nodes[0].Live || strings.TrimSuffix(st.Nodes[0].Address, "/") != strings.TrimSuffix(s.URL(), "/") || st.Nodes[0].PartitionsHeld != 4 || st.Nodes[0].PartitionsLed != 4 {
		t.Fatalf("nodes: %+v", st.Nodes)
	}
	per := map[string]int{}
	for _, p := range st.Partitions {
		per[p.Container]++
		if len(p.Replicas) != 1 || p.Replicas[0] != 1 || p.Leader != 1 {
			t.Fatalf("partition %+v", p)
		}
		if p.Container == "db/small" && (p.MinInclusive != "" || p.MaxExclusive != "FF" || p.AppliedLsn["1"] != small.Partitions()[0].LSN() || p.AppliedLsn["1"] < 5) {
			t.Fatalf("the small container's partition: %+v", p)
		}
	}
	if per["db/big"] != 3 || per["db/small"] != 1 {
		t.Fatalf("partitions per container: %v", per)
	}
	out.Reset()
	if code := run([]string{"cluster", "status", "--endpoint", s.URL(), "--key", auth.EmulatorKey}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "1 nodes, 4 physical partitions") || !strings.Contains(out.String(), "db/small") {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	errOut.Reset()
	if code := run([]string{"cluster", "status", "--endpoint", s.URL(), "--key", "d3Jvbmd3cm9uZ3dyb25nd3Jvbmd3cm9uZ3dyb25nd3Jvbmc="}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "Unauthorized") {
		t.Fatalf("a wrong key: exit %d: %s", code, errOut.String())
	}
	if code := run([]string{"cluster", "frobnicate"}, &out, &errOut); code != 2 {
		t.Fatalf("an unknown cluster command: exit %d", code)
	}
}
