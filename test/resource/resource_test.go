// Package resource runs the parsec binary under a memory limit against
// hostile clients (slow uploaders, clients that never read their response,
// query bombs) while an honest client does point reads, and checks that the
// server stays within its budget: every honest read succeeds, the peak RSS
// stays under a bound, and once the attack ends the goroutines return to
// their baseline.
//
// The process's memory is bounded with GOMEMLIMIT and observed through
// /proc/<pid>/status (VmHWM, the peak RSS); a memory cgroup would make the
// bound hard, but the suite does not assume it may create one. Goroutines are
// read from go_goroutines on /metrics.
package resource

import (
	"bufio"
	"bytes"
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
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/testbin"
)

var parsecBin string

func TestMain(m *testing.M) { testbin.Main(m, &parsecBin) }

// Budgets.
const (
	memLimit = "256MiB" // GOMEMLIMIT of the server
	// rssBudget is the peak RSS allowed: the Go heap's limit plus what lives
	// outside it (the block cache, memtables, stacks, runtime overhead).
	rssBudget = 384 << 20
	// killRSS is where the suite kills the server rather than let it take
	// the machine: the budget is blown by then. addressLimit, the server's
	// RLIMIT_AS when prlimit(1) is there, stops it even between two samples
	// (an idle server maps about 1.8 GB).
	killRSS      = 1 << 30
	addressLimit = 4 << 30
	// goroutineSlack is how many goroutines above the baseline count as back
	// to it (timers and background work come and go).
	goroutineSlack = 8
)

// Server settings of the suite: tight, so the attack is bounded in seconds.
var serverFlags = []string{"--read-timeout", "2s", "--write-timeout", "2s", "--idle-timeout", "10s", "--max-connections", "256"}

type proc struct {
	cmd       *exec.Cmd
	url       string
	addr      string
	mongoAddr string        // the MongoDB API's address, when served
	exited    chan struct{} // closed when the process has exited
}

var (
	urlRe   = regexp.MustCompile(`on (http://[^ ]+) `)
	mongoRe = regexp.MustCompile(`MongoDB API on mongodb://([^/]+)/`)
)

// start runs the server with the suite's flags, the key, and extra; with
// --mongo-listen among extra it waits for the MongoDB API's address too.
func start(t *testing.T, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--no-throttle", "--key", serverKey}, serverFlags...)
	args = append(args, extra...)
	wantMongo := slices.Contains(extra, "--mongo-listen")
	cmd := exec.Command(parsecBin, args...)
	if prlimit, err := exec.LookPath("prlimit"); err == nil {
		// prlimit sets the limit and execs the server: same process.
		cmd = exec.Command(prlimit, append([]string{fmt.Sprintf("--as=%d", addressLimit), "--", parsecBin}, args...)...)
	} else {
		t.Logf("no prlimit: the server's memory is bounded by GOMEMLIMIT=%s and a kill at %d MiB RSS only", memLimit, killRSS>>20)
	}
	cmd.Env = append(os.Environ(), "GOMEMLIMIT="+memLimit)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan [2]string, 1)
	go func() {
		var u, m string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if s := urlRe.FindStringSubmatch(sc.Text()); s != nil {
				u = s[1]
			}
			if s := mongoRe.FindStringSubmatch(sc.Text()); s != nil {
				m = s[1]
			}
			if u != "" && (m != "" || !wantMongo) {
				found <- [2]string{u, m}
				u = ""
			}
		}
	}()
	select {
	case f := <-found:
		u := f[0]
		p := &proc{cmd: cmd, url: u, addr: strings.TrimPrefix(u, "http://"), mongoAddr: f[1], exited: make(chan struct{})}
		go func() {
			cmd.Wait()
			close(p.exited)
		}()
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-p.exited:
			case <-time.After(10 * time.Second):
				t.Log("the server did not stop within 10s of SIGINT: killed")
				cmd.Process.Kill()
				<-p.exited
			}
		})
		return p
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("server did not report its address within 10s")
	}
	return nil
}

// serverKey is the server's primary key: one of its own, so that MongoDB
// clients must authenticate.
const serverKey = "cmVzb3VyY2VyZXNvdXJjZXJlc291cmNlcmVzb3VyY2VyZXNvdXJjZXJlc291cmNlcmU="

var key, _ = auth.DecodeKey(serverKey)

// head returns the head of a signed HTTP/1.1 request (up to the blank line).
func head(method, path, host string, length int, extra ...string) string {
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link := auth.Resource(path)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nx-ms-date: %s\r\nAuthorization: %s\r\nContent-Length: %d\r\n",
		method, path, host, date, auth.Header(auth.Sign(key, method, typ, link, date)), length)
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// call sends a signed request with client and returns the status and body.
func call(ctx context.Context, client *http.Client, base, method, path string, body []byte, hdr ...string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	auth.SignRequest(req, key, time.Now())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

var setupClient = &http.Client{Timeout: 60 * time.Second}

func must(t *testing.T, p *proc, method, path string, body []byte, want int, hdr ...string) {
	t.Helper()
	st, b, err := call(context.Background(), setupClient, p.url, method, path, body, hdr...)
	if err != nil || st != want {
		t.Fatalf("%s %s: %d %.300s %v", method, path, st, b, err)
	}
}

const bigItems = 24 // ~1.9 MB each

// seed creates database db and container c (partition key /pk) with item
// small, bigItems items big0... of about 1.9 MB, and item arr with a
// 500-element array (for joins).
func seed(t *testing.T, p *proc) {
	t.Helper()
	t0 := time.Now()
	defer func() { t.Logf("seeded in %v", time.Since(t0).Round(time.Millisecond)) }()
	must(t, p, "POST", "/dbs", []byte(`{"id":"db"}`), 201)
	must(t, p, "POST", "/dbs/db/colls", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), 201)
	must(t, p, "POST", "/dbs/db/colls/c/docs", []byte(`{"id":"small","pk":"s","v":1}`), 201, "x-ms-documentdb-partitionkey", `["s"]`)
	pad := strings.Repeat("x", 1900<<10)
	for i := range bigItems {
		pk := fmt.Sprintf("b%d", i)
		must(t, p, "POST", "/dbs/db/colls/c/docs", fmt.Appendf(nil, `{"id":"big%d","pk":%q,"pad":%q}`, i, pk, pad), 201,
			"x-ms-documentdb-partitionkey", fmt.Sprintf("[%q]", pk))
	}
	arr := make([]int, 500)
	for i := range arr {
		arr[i] = i
	}
	b, _ := json.Marshal(map[string]any{"id": "arr", "pk": "a", "arr": arr})
	must(t, p, "POST", "/dbs/db/colls/c/docs", b, 201, "x-ms-documentdb-partitionkey", `["a"]`)
	setupClient.CloseIdleConnections()
}

// goroutines reads go_goroutines from /metrics.
func goroutines(p *proc) (int, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	st, b, err := call(context.Background(), c, p.url, "GET", "/metrics", nil)
	if err != nil || st != 200 {
		return 0, fmt.Errorf("GET /metrics: %d %v", st, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "go_goroutines "); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("/metrics has no go_goroutines")
}

// settledGoroutines waits, at most 20s, until the goroutine count is at most
// limit, and returns the last count read (-1 if none could be).
func settledGoroutines(t *testing.T, p *proc, limit int) int {
	t.Helper()
	n := -1
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		m, err := goroutines(p)
		if err != nil {
			t.Log(err)
			continue
		}
		if n = m; n <= limit {
			break
		}
	}
	return n
}

// baseline returns the goroutine count once two readings 200ms apart agree
// (at most 5s).
func baseline(t *testing.T, p *proc) int {
	t.Helper()
	last := -1
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		n, err := goroutines(p)
		if err != nil {
			t.Fatal(err)
		}
		if n == last || time.Now().After(end) {
			return n
		}
		last = n
	}
}

// status reads a field of /proc/<pid>/status, in bytes.
func status(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// honest does point reads of item small on one keep-alive connection until
// stop is closed, and records each read's latency.
type honest struct {
	reads    []time.Duration
	failures []string
	done     chan struct{}
}

func runHonest(t *testing.T, p *proc, stop <-chan struct{}) *honest {
	t.Helper()
	h := &honest{done: make(chan struct{})}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxConnsPerHost: 1}}
	// Connect before the attack: the connection holds its slot.
	if st, _, err := call(context.Background(), client, p.url, "GET", "/dbs/db/colls/c/docs/small", nil, "x-ms-documentdb-partitionkey", `["s"]`); err != nil || st != 200 {
		t.Fatalf("first honest point read: %d %v", st, err)
	}
	go func() {
		defer close(h.done)
		defer client.CloseIdleConnections()
		for {
			select {
			case <-stop:
				return
			default:
			}
			t0 := time.Now()
			st, b, err := call(context.Background(), client, p.url, "GET", "/dbs/db/colls/c/docs/small", nil, "x-ms-documentdb-partitionkey", `["s"]`)
			d := time.Since(t0)
			if err != nil || st != 200 || !bytes.Contains(b, []byte(`"small"`)) {
				h.failures = append(h.failures, fmt.Sprintf("status %d err %v body %.100s", st, err, b))
				continue
			}
			h.reads = append(h.reads, d)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return h
}

func (h *honest) report(t *testing.T) {
	t.Helper()
	<-h.done
	if len(h.reads) == 0 {
		t.Errorf("no honest point read succeeded")
		return
	}
	s := slices.Clone(h.reads)
	slices.Sort(s)
	pct := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	t.Logf("honest point reads during the attack: %d, p50 %v, p99 %v, max %v", len(s), pct(0.50), pct(0.99), s[len(s)-1])
	for i, f := range h.failures {
		if i == 5 {
			break
		}
		t.Errorf("honest point read failed: %s", f)
	}
	if len(h.failures) > 0 {
		t.Errorf("%d of %d honest point reads failed", len(h.failures), len(h.failures)+len(h.reads))
	}
}

// attack is a set of hostile clients. Each runs until stop is closed; the
// connections it holds then are closed by release, after the check that the
// server let go of them on its own.
type attack struct {
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	held    []net.Conn
	counts  sync.Map // name → *atomic.Int64
	dialErr atomic.Int64
}

func newAttack() *attack { return &attack{stop: make(chan struct{})} }

func (a *attack) count(name string) {
	v, _ := a.counts.LoadOrStore(name, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

func (a *attack) hold(c net.Conn) {
	a.mu.Lock()
	a.held = append(a.held, c)
	a.mu.Unlock()
}

func (a *attack) stopped() bool {
	select {
	case <-a.stop:
		return true
	default:
		return false
	}
}

// release closes every connection the attackers still hold.
func (a *attack) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, c := range a.held {
		c.Close()
	}
	a.held = nil
}

func (a *attack) log(t *testing.T) {
	a.counts.Range(func(k, v any) bool {
		t.Logf("attack %s: %d", k, v.(*atomic.Int64).Load())
		return true
	})
}

func (a *attack) spawn(n int, f func()) {
	for range n {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for !a.stopped() {
				f()
			}
		}()
	}
}

func (a *attack) dial(p *proc) net.Conn {
	c, _ := dialAddr(a, p.addr)
	return c
}

// dialAddr connects to addr, counting a failure and pausing after one.
func dialAddr(a *attack, addr string) (net.Conn, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		a.dialErr.Add(1)
		time.Sleep(50 * time.Millisecond)
		return nil, err
	}
	return c, nil
}

// slowUploaders: authenticated item writes whose 2 MB body comes one byte
// every 200ms. A connection still open when the attack stops is held until
// release.
func (a *attack) slowUploaders(p *proc, n int) {
	a.spawn(n, func() {
		c := a.dial(p)
		if c == nil {
			return
		}
		if _, err := io.WriteString(c, head("POST", "/dbs/db/colls/c/docs", p.addr, 2<<20, `x-ms-documentdb-partitionkey: ["u"]`)); err != nil {
			c.Close()
			return
		}
		a.count("slow uploads started")
		for !a.stopped() {
			if _, err := c.Write([]byte{' '}); err != nil {
				a.count("slow uploads cut off or refused")
				c.Close()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		a.hold(c)
	})
}

// nonReaders: pipelined reads of 1.9 MB items whose responses are never
// read. The connection is held until release.
func (a *attack) nonReaders(p *proc, n int) {
	var i atomic.Int64
	a.spawn(n, func() {
		c := a.dial(p)
		if c == nil {
			return
		}
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetReadBuffer(4 << 10)
		}
		a.hold(c)
		var reqs strings.Builder
		for range 8 {
			k := i.Add(1) % bigItems
			reqs.WriteString(head("GET", fmt.Sprintf("/dbs/db/colls/c/docs/big%d", k), p.addr, 0, fmt.Sprintf(`x-ms-documentdb-partitionkey: ["b%d"]`, k)))
		}
		if _, err := io.WriteString(c, reqs.String()); err == nil {
			a.count("non-reading clients")
		}
		<-a.stop
	})
}

// query sends a cross-partition query to the items at path and reads the
// response.
func (a *attack) query(ctx context.Context, p *proc, client *http.Client, path, q string, maxItems int) (int, []byte, error) {
	body, _ := json.Marshal(map[string]any{"query": q})
	return call(ctx, client, p.url, "POST", path, body,
		"Content-Type", "application/query+json", "x-ms-documentdb-isquery", "True",
		"x-ms-documentdb-query-enablecrosspartition", "True", "x-ms-max-item-count", strconv.Itoa(maxItems))
}

// stringDoubling: a query whose nested joins double a 1.9 MB string 20
// times.
func (a *attack) stringDoubling(p *proc, n int) {
	q := "SELECT VALUE LENGTH(s20) FROM c JOIN (SELECT VALUE CONCAT(c.pad, c.pad)) s1"
	for i := 2; i <= 20; i++ {
		q += fmt.Sprintf(" JOIN (SELECT VALUE CONCAT(s%d, s%d)) s%d", i-1, i-1, i)
	}
	q += ` WHERE c.id = "big0"`
	a.queries(p, n, "string-doubling queries", "/dbs/db/colls/c/docs", q, 100, 0)
}

// selectAll: SELECT * with no page limit over the 1.9 MB items.
func (a *attack) selectAll(p *proc, n int) {
	a.queries(p, n, "unbounded SELECT * queries", "/dbs/db/colls/c/docs", "SELECT * FROM c", -1, 0)
}

// cartesian: a three-way self join of a 500-element array (125 million
// rows) whose client hangs up after 500ms.
func (a *attack) cartesian(p *proc, n int) {
	a.queries(p, n, "cartesian joins abandoned", "/dbs/db/colls/c/docs", "SELECT VALUE COUNT(1) FROM c JOIN x IN c.arr JOIN y IN c.arr JOIN z IN c.arr", -1, 500*time.Millisecond)
}

func (a *attack) queries(p *proc, n int, name, path, q string, maxItems int, hangUp time.Duration) {
	client := &http.Client{Timeout: 60 * time.Second}
	var statuses sync.Map
	a.spawn(n, func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if hangUp > 0 {
			go func() {
				select {
				case <-time.After(hangUp):
				case <-a.stop:
				}
				cancel()
			}()
		} else {
			go func() {
				select {
				case <-ctx.Done():
				case <-a.stop:
					cancel()
				}
			}()
		}
		st, b, err := a.query(ctx, p, client, path, q, maxItems)
		a.count(name)
		key := strconv.Itoa(st)
		if err != nil {
			key = "error"
		}
		if _, loaded := statuses.LoadOrStore(key, true); !loaded {
			a.count(fmt.Sprintf("%s answered %s (%d bytes) e.g. %.120s", name, key, len(b), b))
		}
		if err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// groupItems is how many items seedGroups creates: 40 in each of 16
// partitions.
const groupItems = 640

// seedGroups creates container g (partition key /pk) with 16 partitions
// and groupItems small items.
func seedGroups(t *testing.T, p *proc) {
	t.Helper()
	must(t, p, "POST", "/dbs/db/colls", []byte(`{"id":"g","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`), 201,
		"x-ms-offer-throughput", "96000") // 16 partitions of 6,000 RU/s
	for i := range groupItems {
		pk := fmt.Sprintf("g%d", i)
		must(t, p, "POST", "/dbs/db/colls/g/docs", fmt.Appendf(nil, `{"id":"%d","pk":%q}`, i, pk), 201,
			"x-ms-documentdb-partitionkey", fmt.Sprintf("[%q]", pk))
	}
	setupClient.CloseIdleConnections()
}

// groupBy: a 2.4 KB cross-partition GROUP BY whose key is a 1 MB string
// built of REPLICATEs, one group per item of container g: 640 MB of groups
// over 16 partitions.
func (a *attack) groupBy(p *proc, n int) {
	key := "CONCAT(c.id" + strings.Repeat(`, REPLICATE("x", 10000)`, 100) + ")"
	q := "SELECT COUNT(1) AS n FROM c GROUP BY " + key
	a.queries(p, n, "GROUP BY bombs", "/dbs/db/colls/g/docs", q, -1, 0)
}

// run runs an attack for d with an honest client beside it, then checks
// the budgets.
func run(t *testing.T, p *proc, d time.Duration, launch func(a *attack)) {
	t.Helper()
	pid := p.cmd.Process.Pid
	base := baseline(t, p)
	rssBefore := status(pid, "VmRSS")
	t.Logf("before the attack: %d goroutines, RSS %d MiB, peak RSS %d MiB", base, rssBefore>>20, status(pid, "VmHWM")>>20)

	a := newAttack()
	stopHonest := make(chan struct{})
	h := runHonest(t, p, stopHonest)
	var peak, killedAt atomic.Int64
	sampled := make(chan struct{})
	go func() { // VmHWM is the peak; the samples are for the watchdog
		defer close(sampled)
		for {
			r := status(pid, "VmRSS")
			if r > peak.Load() {
				peak.Store(r)
			}
			if r > killRSS {
				hwm := status(pid, "VmHWM")
				p.cmd.Process.Kill()
				killedAt.Store(max(r, hwm))
				return
			}
			select {
			case <-a.stop:
				return
			case <-p.exited:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	launch(a)
	select {
	case <-time.After(d):
	case <-p.exited:
	}
	close(a.stop)
	close(stopHonest)
	h.report(t)
	<-sampled

	// The attackers' connections are still open: the server must have let
	// go of them on its own (timeouts), not because the clients left.
	a.log(t)
	if k := killedAt.Load(); k > 0 {
		a.release()
		a.wg.Wait()
		t.Fatalf("killed the server at %d MiB RSS (budget %d MiB)", k>>20, rssBudget>>20)
	}
	select {
	case <-p.exited:
		a.release()
		a.wg.Wait()
		t.Fatalf("the server exited during the attack (peak RSS sampled %d MiB)", peak.Load()>>20)
	default:
	}
	t0 := time.Now()
	n := settledGoroutines(t, p, base+goroutineSlack)
	t.Logf("goroutines settled in %v", time.Since(t0).Round(time.Millisecond))
	hwm := status(pid, "VmHWM")
	t.Logf("peak RSS %d MiB (sampled %d MiB), budget %d MiB; goroutines %d, baseline %d", hwm>>20, peak.Load()>>20, rssBudget>>20, n, base)
	a.release()
	a.wg.Wait()
	if hwm > rssBudget {
		t.Errorf("peak RSS %d MiB is over the budget of %d MiB", hwm>>20, rssBudget>>20)
	}
	if n < 0 || n > base+goroutineSlack {
		t.Errorf("%d goroutines 20s after the attack, baseline %d", n, base)
	}
}

func TestSlowAndNonReadingClients(t *testing.T) {
	p := start(t)
	seed(t, p)
	run(t, p, 6*time.Second, func(a *attack) {
		a.nonReaders(p, 40)
		a.slowUploaders(p, 300) // with the non-readers, more than --max-connections
	})
}

// TestQueryBombs runs each query bomb against its own server.
func TestQueryBombs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		launch func(a *attack, p *proc)
	}{
		{"string doubling", func(a *attack, p *proc) { a.stringDoubling(p, 2) }},
		{"unbounded SELECT *", func(a *attack, p *proc) { a.selectAll(p, 4) }},
		{"abandoned cartesian join", func(a *attack, p *proc) { a.cartesian(p, 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t)
			seed(t, p)
			run(t, p, 5*time.Second, func(a *attack) { tc.launch(a, p) })
		})
	}
}

// TestGroupByBomb: two clients send a GROUP BY of 640 MB of groups over 16
// partitions; each page is refused within the page's and the server's
// query memory, while an honest client reads.
func TestGroupByBomb(t *testing.T) {
	p := start(t)
	seed(t, p)
	seedGroups(t, p)
	run(t, p, 5*time.Second, func(a *attack) { a.groupBy(p, 2) })
}
