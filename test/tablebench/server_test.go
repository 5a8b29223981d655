package tablebench

// BenchmarkServer measures the server alone: Parsec runs in a child process
// (this test binary, re-executed), so that the CPU it spends per request can
// be read from /proc and profiled apart from the load generator. Each
// operation is driven two ways: "raw", a plain net/http client that signs
// its requests itself and costs about the same per request for both APIs,
// and "sdk", aztables or azcosmos. Every sub-benchmark reports, besides
// ns/op, the server's CPU per operation (server-µs/op) and the load
// generator's (client-µs/op, the benchmark process's CPU).
//
//	go test -run '^$' -bench 'Server/get/.*/raw' -benchtime 20000x ./test/tablebench
//
// With TABLEBENCH_CPUPROFILE=DIR the server writes a CPU profile of each
// sub-benchmark's measured phase (not the load) to DIR/<name>.pprof.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

const serveEnv = "TABLEBENCH_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(serveChild())
	}
	os.Exit(m.Run())
}

// serveChild runs the server until its stdin closes. It prints its two
// addresses on one line, then obeys "start FILE" (begin a CPU profile) and
// "stop" (write it) on stdin, answering "ok" to each.
func serveChild() int {
	signal.Ignore(syscall.SIGINT)
	srv, err := server.Start(server.Options{Listen: "127.0.0.1:0", TableListen: "127.0.0.1:0", InMemory: true, NoThrottle: true, TableThroughput: throughput})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%s %s\n", srv.URL(), srv.TableAddr())
	var f *os.File
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		cmd, arg, _ := strings.Cut(sc.Text(), " ")
		switch cmd {
		case "start":
			if f, err = os.Create(arg); err == nil {
				err = pprof.StartCPUProfile(f)
			}
		case "stop":
			if f != nil {
				pprof.StopCPUProfile()
				err = f.Close()
				f = nil
			}
		}
		if err != nil {
			fmt.Println("error", err)
		} else {
			fmt.Println("ok")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	return 0
}

// child is the server process of this benchmark run, shared by all
// sub-benchmarks.
type child struct {
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Reader
	nosqlURL string
	tableURL string // path style, account devstoreaccount1
	loaded   map[string]bool
}

var (
	childOnce sync.Once
	theChild  *child
	childErr  error
)

func startChild(b *testing.B) *child {
	b.Helper()
	childOnce.Do(func() {
		c := &child{loaded: map[string]bool{}}
		c.cmd = exec.Command(os.Args[0], "-test.run=^$")
		c.cmd.Env = append(os.Environ(), serveEnv+"=1")
		c.cmd.Stderr = os.Stderr
		c.in, _ = c.cmd.StdinPipe()
		stdout, _ := c.cmd.StdoutPipe()
		c.out = bufio.NewReader(stdout)
		if childErr = c.cmd.Start(); childErr != nil {
			return
		}
		line, err := c.out.ReadString('\n')
		if err != nil {
			childErr = fmt.Errorf("server child: %w", err)
			return
		}
		u, t, _ := strings.Cut(strings.TrimSpace(line), " ")
		c.nosqlURL, c.tableURL = strings.TrimSuffix(u, "/"), "http://"+t+"/devstoreaccount1"
		childErr = c.setup()
		theChild = c
	})
	if childErr != nil {
		b.Fatal(childErr)
	}
	return theChild
}

func (c *child) setup() error {
	ctx := context.Background()
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		return err
	}
	cc, err := azcosmos.NewClientWithKey(c.nosqlURL+"/", cred, nil)
	if err != nil {
		return err
	}
	if _, err := cc.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "bench"}, nil); err != nil {
		return err
	}
	db, _ := cc.NewDatabase("bench")
	tp := azcosmos.NewManualThroughputProperties(throughput)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "items", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodPost, c.tableURL+"/Tables", strings.NewReader(`{"TableName":"bench"}`))
	req.Header.Set("Content-Type", "application/json")
	signTable(req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("create table: %s", resp.Status)
	}
	return nil
}

// command sends one profiling command to the server child.
func (c *child) command(b *testing.B, cmd string) {
	b.Helper()
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		b.Fatal(err)
	}
	if line, err := c.out.ReadString('\n'); err != nil || line != "ok\n" {
		b.Fatalf("server child: %q %v", line, err)
	}
}

// cpu is the child's user+system CPU time so far, from /proc.
func (c *child) cpu(b *testing.B) time.Duration {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var emulatorKey, _ = base64.StdEncoding.DecodeString(auth.EmulatorKey)

// signTable signs req with SharedKey as aztables does: x-ms-date, and the
// string to sign of method, Content-MD5, Content-Type, date and
// "/account/path".
func signTable(req *http.Request) {
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	sts := req.Method + "\n\n" + req.Header.Get("Content-Type") + "\n" + date + "\n/devstoreaccount1" + req.URL.EscapedPath()
	h := hmac.New(sha256.New, emulatorKey)
	h.Write([]byte(sts))
	req.Header.Set("Authorization", "SharedKey devstoreaccount1:"+base64.StdEncoding.EncodeToString(h.Sum(nil)))
}

var rawClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}}

func do(req *http.Request, want int) error {
	resp, err := rawClient.Do(req)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s %s", req.Method, req.URL, resp.Status, body)
	}
	if req.Method == http.MethodGet && len(body) < len(pad) {
		return fmt.Errorf("short body %s", body)
	}
	return nil
}

// rawTargets are the two APIs through net/http, signed by hand.
func rawTargets(c *child) map[string]target {
	nosqlReq := func(method, path, pk string, body []byte) *http.Request {
		req, _ := http.NewRequest(method, c.nosqlURL+path, bytes.NewReader(body))
		req.Header.Set("x-ms-version", "2020-07-15")
		req.Header.Set("x-ms-documentdb-partitionkey", `["`+pk+`"]`)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Prefer", "return=minimal")
		}
		auth.SignRequest(req, emulatorKey, time.Now())
		return req
	}
	return map[string]target{
		"table": {
			insert: func(ctx context.Context, pk, rk string) error {
				e := fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"pad":%q}`, pk, rk, pad)
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.tableURL+"/bench", strings.NewReader(e))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Prefer", "return-no-content")
				signTable(req)
				return do(req, http.StatusNoContent)
			},
			get: func(ctx context.Context, pk, rk string) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.tableURL+"/bench(PartitionKey='"+pk+"',RowKey='"+rk+"')", nil)
				signTable(req)
				return do(req, http.StatusOK)
			},
		},
		"nosql": {
			insert: func(ctx context.Context, pk, rk string) error {
				doc := fmt.Sprintf(`{"id":%q,"pk":%q,"pad":%q}`, rk, pk, pad)
				return do(nosqlReq(http.MethodPost, "/dbs/bench/colls/items/docs", pk, []byte(doc)).WithContext(ctx), http.StatusCreated)
			},
			get: func(ctx context.Context, pk, rk string) error {
				return do(nosqlReq(http.MethodGet, "/dbs/bench/colls/items/docs/"+rk, pk, nil).WithContext(ctx), http.StatusOK)
			},
		},
	}
}

// sdkTargets are the two APIs through aztables and azcosmos.
func sdkTargets(b *testing.B, c *child) map[string]target {
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	cc, err := azcosmos.NewClientWithKey(c.nosqlURL+"/", cred, &azcosmos.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		b.Fatal(err)
	}
	container, _ := cc.NewContainer("bench", "items")
	return map[string]target{"table": tableTarget(tableClientNoCreate(b, c.tableURL)), "nosql": nosqlTarget(container)}
}

// BenchmarkServer: see the top of this file.
func BenchmarkServer(b *testing.B) {
	c := startChild(b)
	raw := rawTargets(c)
	sdk := sdkTargets(b, c)
	profDir := os.Getenv("TABLEBENCH_CPUPROFILE")
	for _, op := range []string{"insert", "get"} {
		for _, api := range []string{"table", "nosql"} {
			for _, client := range []string{"raw", "sdk"} {
				b.Run(op+"/"+api+"/"+client, func(b *testing.B) {
					t := raw[api]
					if client == "sdk" {
						t = sdk[api]
					}
					f := func(ctx context.Context, rng *rand.Rand) error {
						pk, rk := key(int(serial.Add(1)) + records)
						return t.insert(ctx, pk, rk)
					}
					if op == "get" {
						if !c.loaded[api] {
							load(b, raw[api])
							c.loaded[api] = true
						}
						f = func(ctx context.Context, rng *rand.Rand) error {
							pk, rk := key(rng.IntN(records))
							return t.get(ctx, pk, rk)
						}
					}
					if profDir != "" {
						c.command(b, "start "+filepath.Join(profDir, op+"-"+api+"-"+client+".pprof"))
					}
					server0, client0 := c.cpu(b), selfCPU()
					b.ResetTimer()
					run(b, f)
					b.StopTimer()
					server1, client1 := c.cpu(b), selfCPU()
					if profDir != "" {
						c.command(b, "stop")
					}
					b.ReportMetric(float64((server1-server0).Microseconds())/float64(b.N), "server-µs/op")
					b.ReportMetric(float64((client1-client0).Microseconds())/float64(b.N), "client-µs/op")
				})
			}
		}
	}
}

// tableClientNoCreate is a client of table "bench", which exists, at the
// path-style endpoint url.
func tableClientNoCreate(b *testing.B, url string) *aztables.Client {
	b.Helper()
	cred, err := aztables.NewSharedKeyCredential(azuriteAccount, auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	c, err := aztables.NewClientWithSharedKey(url+"/bench", cred, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		b.Fatal(err)
	}
	return c
}
