// Package cluster tests a cluster of real parsec serve processes on
// loopback through the Go SDK: replication, gateway forwarding through
// every node, leaders killed with SIGKILL and restarted, and the ways a
// node must refuse to start or to join.
package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/testbin"
)

var parsecBin string

func TestMain(m *testing.M) { testbin.Main(m, &parsecBin) }

// node is one member's fixed addresses and data directory, and its
// process while it runs.
type node struct {
	id            int
	dir           string
	listen, clust string // client and cluster HOST:PORT
	cmd           *exec.Cmd
	exited        chan error
	out           *testbin.Output
	https         bool   // it serves HTTPS (--tls)
	mongo         string // its --mongo-listen HOST:PORT, if it serves MongoDB
}

func (n *node) url() string {
	if n.https {
		return "https://" + n.listen
	}
	return "http://" + n.listen
}

// freeAddr returns a loopback address with a port free at the time.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

var servingRe = regexp.MustCompile(`serving the Cosmos DB NoSQL API on https?://`)

// start runs parsec serve for n with the flags of a cluster member and
// extra ones; it returns nil once the node serves, or the process's exit
// error and output if it exits first.
func (n *node) start(t testing.TB, extra ...string) error {
	t.Helper()
	args := []string{"--node-id", fmt.Sprint(n.id), "--cluster-listen", n.clust}
	if n.mongo != "" {
		args = append(args, "--mongo-listen", n.mongo)
	}
	return n.run(t, append(args, extra...)...)
}

// run runs parsec serve on n's directory and client address with args.
func (n *node) run(t testing.TB, args ...string) error {
	t.Helper()
	args = append([]string{"serve", "--data", n.dir, "--listen", n.listen, "--no-throttle", "--partition-max-rus", "1000"}, args...)
	n.cmd = exec.Command(parsecBin, args...)
	n.out = &testbin.Output{}
	pr, pw := io.Pipe()
	n.cmd.Stdout = io.MultiWriter(n.out, pw)
	n.cmd.Stderr = n.out
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if servingRe.MatchString(sc.Text()) {
				up <- struct{}{}
			}
		}
	}()
	n.exited = make(chan error, 1)
	go func() { n.exited <- n.cmd.Wait(); pw.Close() }()
	select {
	case <-up:
		return nil
	case err := <-n.exited:
		n.cmd = nil
		if err == nil {
			err = errors.New("exited with status 0")
		}
		return fmt.Errorf("%v; output:\n%s", err, n.out)
	case <-time.After(120 * time.Second):
		_ = n.cmd.Process.Kill()
		t.Fatalf("node %d neither started nor exited within 120s; output:\n%s", n.id, n.out)
	}
	return nil
}

func (n *node) kill() {
	if n.cmd != nil {
		_ = n.cmd.Process.Kill()
		<-n.exited
		n.cmd = nil
	}
}

func (n *node) stop(t testing.TB) {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(os.Interrupt)
	select {
	case <-n.exited:
	case <-time.After(60 * time.Second):
		t.Errorf("node %d did not stop on SIGINT; output:\n%s", n.id, n.out)
		n.kill()
	}
	n.cmd = nil
}

// newNodes prepares count nodes with fresh directories and addresses.
func newNodes(t testing.TB, count int) []*node {
	var ns []*node
	for i := 1; i <= count; i++ {
		n := &node{id: i, dir: t.TempDir(), listen: freeAddr(t), clust: freeAddr(t)}
		ns = append(ns, n)
		t.Cleanup(func() {
			n.kill()
			if t.Failed() && n.out != nil {
				t.Logf("node %d's output:\n%s", n.id, n.out)
			}
		})
	}
	return ns
}

// startCluster starts three nodes: the first bootstraps, the others join
// through it.
func startCluster(t testing.TB, extra ...string) []*node {
	t.Helper()
	ns := newNodes(t, 3)
	if err := ns[0].start(t, extra...); err != nil {
		t.Fatalf("node 1: %v", err)
	}
	for _, n := range ns[1:] {
		if err := n.start(t, append([]string{"--join", ns[0].clust}, extra...)...); err != nil {
			t.Fatalf("node %d: %v", n.id, err)
		}
	}
	return ns
}

func newClient(t testing.TB, n *node) *azcosmos.Client {
	t.Helper()
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	var opts azcosmos.ClientOptions
	if n.https {
		opts.Transport = httpsClient(t, n)
	}
	c, err := azcosmos.NewClientWithKey(n.url()+"/", cred, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var key, _ = auth.DecodeKey(auth.EmulatorKey)

// clusterStatus reads GET /_cluster from n.
func clusterStatus(n *node) (status, error) {
	req, err := http.NewRequest("GET", n.url()+"/_cluster", nil)
	if err != nil {
		return status{}, err
	}
	auth.SignRequest(req, key, time.Now())
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return status{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return status{}, fmt.Errorf("GET /_cluster: %d %s", resp.StatusCode, b)
	}
	var st status
	return st, json.Unmarshal(b, &st)
}

// settledStatus polls n's GET /_cluster until ok accepts it, for up to 30
// seconds (new groups elect their leaders, a split reaches every node).
func settledStatus(t *testing.T, n *node, ok func(status) error) status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := clusterStatus(n)
		if err == nil {
			err = ok(st)
		}
		if err == nil {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %d reports %v", n.id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type status struct {
	Nodes []struct {
		ID             int    `json:"id"`
		Address        string `json:"address"`
		ClusterAddress string `json:"clusterAddress"`
		Live           bool   `json:"live"`
		Held           int    `json:"partitionsHeld"`
		Led            int    `json:"partitionsLed"`
	} `json:"nodes"`
	Partitions []struct {
		Container  string            `json:"container"`
		Range      string            `json:"range"`
		Min        string            `json:"minInclusive"`
		Max        string            `json:"maxExclusive"`
		Replicas   []int             `json:"replicas"`
		Leader     int               `json:"leader"`
		AppliedLSN map[string]uint64 `json:"appliedLsn"`
	} `json:"partitions"`
}

func ctxT() context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	time.AfterFunc(61*time.Second, cancel)
	return c
}

func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// TestClusterReplicatesThroughEveryNode forms a three-node cluster,
// creates a database and a container through one node, writes through
// each and reads every write back through every node, raises the
// throughput so that every partition splits, then checks the cluster's
// map: every partition on three replicas with one leader, the same on
// every node.
func TestClusterReplicatesThroughEveryNode(t *testing.T) {
	ns := startCluster(t)
	clients := []*azcosmos.Client{newClient(t, ns[0]), newClient(t, ns[1]), newClient(t, ns[2])}
	// Through node 2, which does not lead the meta group (node 1
	// bootstrapped it): the request is sent on to the leader.
	if _, err := clients[1].CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatalf("create database through node 2: %v", err)
	}
	db, _ := clients[2].NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(4000)
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatalf("create container through node 3: %v", err)
	}
	const items = 120
	writeThenReadEverywhere(t, clients, items, 17)
	// Raise the throughput through node 3: every partition splits in two,
	// through its own log, whichever node leads it.
	cc3, _ := clients[2].NewContainer("db", "c")
	if _, err := cc3.ReplaceThroughput(ctxT(), azcosmos.NewManualThroughputProperties(8000), nil); err != nil {
		t.Fatalf("raise the throughput through node 3: %v", err)
	}
	for i := range items {
		cc, _ := clients[(i+1)%3].NewContainer("db", "c")
		if _, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%17)), fmt.Sprintf("i%d", i), nil); err != nil {
			t.Fatalf("read item %d through node %d after the split: %v", i, (i+1)%3+1, err)
		}
	}
	// The map: the same on every node, three replicas, one leader each
	// (once the children's groups have elected theirs).
	var first status
	for k, n := range ns {
		st := settledStatus(t, n, func(st status) error {
			if len(st.Nodes) != 3 || len(st.Partitions) != 8 {
				return fmt.Errorf("%d nodes and %d partitions", len(st.Nodes), len(st.Partitions))
			}
			for _, p := range st.Partitions {
				if len(p.Replicas) != 3 || p.Leader == 0 {
					return fmt.Errorf("partition %s with replicas %v and leader %d", p.Range, p.Replicas, p.Leader)
				}
			}
			for _, nd := range st.Nodes {
				if !nd.Live || nd.Held != 8 {
					return fmt.Errorf("node %+v", nd)
				}
			}
			return nil
		})
		if k == 0 {
			first = st
			continue
		}
		for i, p := range st.Partitions {
			q := first.Partitions[i]
			if p.Range != q.Range || p.Min != q.Min || p.Max != q.Max || fmt.Sprint(p.Replicas) != fmt.Sprint(q.Replicas) {
				t.Fatalf("node %d's map differs from node 1's: %+v vs %+v", k+1, p, q)
			}
		}
	}
	// parsec partitions' endpoint names the node answering and each
	// partition's leader and replicas.
	req, _ := http.NewRequest("GET", ns[1].url()+"/dbs/db/colls/c/partitions", nil)
	auth.SignRequest(req, key, time.Now())
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var parts struct {
		Partitions []struct {
			ID       string `json:"id"`
			Node     int    `json:"node"`
			Leader   int    `json:"leader"`
			Replicas []int  `json:"replicas"`
		} `json:"partitions"`
	}
	err = json.NewDecoder(resp.Body).Decode(&parts)
	resp.Body.Close()
	if err != nil || len(parts.Partitions) != 8 {
		t.Fatalf("partitions through node 2: %v %+v", err, parts)
	}
	for _, p := range parts.Partitions {
		if p.Node != 2 || p.Leader == 0 || fmt.Sprint(p.Replicas) != "[1 2 3]" {
			t.Fatalf("partitions through node 2: %+v", p)
		}
	}
	// /metrics on each node: every range led by exactly one node, and the
	// replicas' applied LSNs equal once the writes have settled.
	deadline := time.Now().Add(30 * time.Second)
	for {
		leads, lsns := map[string]int{}, map[string]map[string]bool{}
		for _, n := range ns {
			for _, m := range metricLines(t, n) {
				switch m.name {
				case "parsec_partition_leader":
					leads[m.rangeID] += int(m.value)
				case "parsec_partition_applied_lsn":
					if lsns[m.rangeID] == nil {
						lsns[m.rangeID] = map[string]bool{}
					}
					lsns[m.rangeID][fmt.Sprint(m.value)] = true
				}
			}
		}
		settled := len(leads) == 8 && len(lsns) == 8
		for r := range leads {
			settled = settled && leads[r] == 1 && len(lsns[r]) == 1
		}
		if settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics: leaders per range %v, applied LSNs per range %v", leads, lsns)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, n := range ns {
		n.stop(t)
	}
}

type metricLine struct {
	name, rangeID string
	value         float64
}

var metricRe = regexp.MustCompile(`^(parsec_partition_[a-z_]+)\{[^}]*range="([^"]+)"[^}]*\} ([0-9.e+-]+)$`)

// metricsPage reads n's /metrics page.
func metricsPage(t testing.TB, n *node) []byte {
	t.Helper()
	req, _ := http.NewRequest("GET", n.url()+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+auth.EmulatorKey)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// metricLines reads the partitions' lines of n's /metrics page.
func metricLines(t *testing.T, n *node) []metricLine {
	t.Helper()
	var out []metricLine
	for _, l := range strings.Split(string(metricsPage(t, n)), "\n") {
		if m := metricRe.FindStringSubmatch(l); m != nil {
			v, _ := strconv.ParseFloat(m[3], 64)
			out = append(out, metricLine{m[1], m[2], v})
		}
	}
	return out
}

// TestClusterReplicationFactor runs three nodes with a replication factor
// of two: a container's partitions live on two of them, and the third
// serves its clients all the same, by sending their requests to the nodes
// that hold the partitions (writes, point reads, queries).
func TestClusterReplicationFactor(t *testing.T) {
	ns := startCluster(t, "--replication-factor", "2")
	clients := []*azcosmos.Client{newClient(t, ns[0]), newClient(t, ns[1]), newClient(t, ns[2])}
	if _, err := clients[0].CreateDatabase(ctxT(), azcosmos.DatabaseProperties{ID: "db"}, nil); err != nil {
		t.Fatal(err)
	}
	db, _ := clients[0].NewDatabase("db")
	tp := azcosmos.NewManualThroughputProperties(4000)
	if _, err := db.CreateContainer(ctxT(), azcosmos.ContainerProperties{ID: "c", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		t.Fatal(err)
	}
	st, err := clusterStatus(ns[0])
	if err != nil {
		t.Fatal(err)
	}
	outside := 0 // the node without replicas
	for _, p := range st.Partitions {
		if len(p.Replicas) != 2 {
			t.Fatalf("partition %s has replicas %v, want two", p.Range, p.Replicas)
		}
		outside = 6 - p.Replicas[0] - p.Replicas[1]
	}
	t.Logf("node %d holds no replica", outside)
	const items = 60
	for i := range items {
		// Every third write through the node that holds nothing.
		cc, _ := clients[i%3].NewContainer("db", "c")
		doc := fmt.Sprintf(`{"id":"i%d","pk":"k%d","n":%d}`, i, i%13, i)
		if _, err := cc.CreateItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%13)), []byte(doc), nil); err != nil {
			t.Fatalf("create item %d through node %d: %v", i, i%3+1, err)
		}
	}
	cc, _ := clients[outside-1].NewContainer("db", "c")
	for i := range items {
		r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%13)), fmt.Sprintf("i%d", i), nil)
		if err != nil {
			t.Fatalf("read item %d through node %d: %v", i, outside, err)
		}
		var doc struct{ N int }
		if json.Unmarshal(r.Value, &doc) != nil || doc.N != i {
			t.Fatalf("item %d through node %d: %s", i, outside, r.Value)
		}
	}
	if n := countItems(t, cc); n != items {
		t.Fatalf("a count through node %d finds %d items, want %d", outside, n, items)
	}
	for _, n := range ns {
		n.stop(t)
	}
}

// writeThenReadEverywhere creates n items in container db/c through the
// nodes in turn, over keys partition keys, then reads each back through
// every node with the session token its write returned (read your writes).
func writeThenReadEverywhere(t *testing.T, clients []*azcosmos.Client, n, keys int) {
	t.Helper()
	sessions := make([]string, n)
	for i := range n {
		cc, _ := clients[i%len(clients)].NewContainer("db", "c")
		pk := fmt.Sprintf("k%d", i%keys)
		doc := fmt.Sprintf(`{"id":"i%d","pk":%q,"n":%d}`, i, pk, i)
		r, err := cc.CreateItem(ctxT(), azcosmos.NewPartitionKeyString(pk), []byte(doc), nil)
		if err != nil {
			t.Fatalf("create item %d through node %d: %v", i, i%len(clients)+1, err)
		}
		if r.SessionToken == nil {
			t.Fatalf("create item %d: no session token", i)
		}
		sessions[i] = *r.SessionToken
	}
	for i := range n {
		for k, c := range clients {
			cc, _ := c.NewContainer("db", "c")
			r, err := cc.ReadItem(ctxT(), azcosmos.NewPartitionKeyString(fmt.Sprintf("k%d", i%keys)), fmt.Sprintf("i%d", i), &azcosmos.ItemOptions{SessionToken: &sessions[i]})
			if err != nil {
				t.Fatalf("read item %d through node %d: %v", i, k+1, err)
			}
			var doc struct{ N int }
			if err := json.Unmarshal(r.Value, &doc); err != nil || doc.N != i {
				t.Fatalf("item %d through node %d: %s", i, k+1, r.Value)
			}
		}
	}
}
