// Package tablebench measures point inserts and point reads by keys through
// the Table API with the official Go SDK (aztables), next to the same
// operations through the NoSQL API with azcosmos on the same server, and
// through aztables against Azurite's in-memory Table service:
//
//	go test -run '^$' -bench . -benchtime 10s ./test/tablebench
//
// The server runs in this process on loopback, in memory and without
// throttling. Azurite runs from test/js/node_modules/.bin/azurite-table
// (npm ci in test/js), or from $AZURITE_TABLE; its benchmarks are skipped
// when neither exists. Not part of the test suite's timing: run by hand.
package tablebench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

const (
	records     = 10_000
	partitions  = 1_000
	parallelism = 16 // goroutines per GOMAXPROCS: 32 on a 2-core box, as the other benchmarks
	throughput  = 40_000

	azuriteAccount = "devstoreaccount1"
	azuriteKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

var pad = strings.Repeat("x", 900)

func key(i int) (pk, rk string) { return fmt.Sprintf("p%04d", i%partitions), fmt.Sprintf("r%06d", i) }

// target is one way of doing a point insert and a point read.
type target struct {
	insert func(ctx context.Context, pk, rk string) error
	get    func(ctx context.Context, pk, rk string) error
}

func tableTarget(c *aztables.Client) target {
	return target{
		insert: func(ctx context.Context, pk, rk string) error {
			e := fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"pad":%q}`, pk, rk, pad)
			_, err := c.AddEntity(ctx, []byte(e), nil)
			return err
		},
		get: func(ctx context.Context, pk, rk string) error {
			r, err := c.GetEntity(ctx, pk, rk, nil)
			if err == nil && len(r.Value) < len(pad) {
				err = fmt.Errorf("short entity %s", r.Value)
			}
			return err
		},
	}
}

func nosqlTarget(c *azcosmos.ContainerClient) target {
	return target{
		insert: func(ctx context.Context, pk, rk string) error {
			doc := fmt.Sprintf(`{"id":%q,"pk":%q,"pad":%q}`, rk, pk, pad)
			_, err := c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), []byte(doc), nil)
			return err
		},
		get: func(ctx context.Context, pk, rk string) error {
			r, err := c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), rk, nil)
			if err == nil && len(r.Value) < len(pad) {
				err = fmt.Errorf("short item %s", r.Value)
			}
			return err
		},
	}
}

// load writes the records through t, 32 at a time.
func load(b *testing.B, t target) {
	b.Helper()
	ctx := context.Background()
	errs := make(chan error, 32)
	var next atomic.Int64
	for range 32 {
		go func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= records {
					errs <- nil
					return
				}
				pk, rk := key(i)
				if err := t.insert(ctx, pk, rk); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 32 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

func startParsec(b *testing.B) (table, nosql target) {
	b.Helper()
	srv, err := server.Start(server.Options{Listen: "127.0.0.1:0", TableListen: "127.0.0.1:0", InMemory: true, NoThrottle: true, TableThroughput: throughput})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	ctx := context.Background()
	tc := tableClient(b, "http://"+srv.TableAddr()+"/devstoreaccount1", "devstoreaccount1", auth.EmulatorKey)

	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	cc, err := azcosmos.NewClientWithKey(srv.URL()+"/", cred, &azcosmos.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cc.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: "bench"}, nil); err != nil {
		b.Fatal(err)
	}
	db, _ := cc.NewDatabase("bench")
	tp := azcosmos.NewManualThroughputProperties(throughput)
	if _, err := db.CreateContainer(ctx, azcosmos.ContainerProperties{ID: "items", PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}},
		&azcosmos.CreateContainerOptions{ThroughputProperties: &tp}); err != nil {
		b.Fatal(err)
	}
	container, _ := db.NewContainer("items")
	return tableTarget(tc), nosqlTarget(container)
}

// tableClient creates table "bench" at the path-style endpoint url.
func tableClient(b *testing.B, url, account, key string) *aztables.Client {
	b.Helper()
	cred, err := aztables.NewSharedKeyCredential(account, key)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(url, cred, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "bench", nil); err != nil {
		b.Fatal(err)
	}
	return svc.NewClient("bench")
}

// startAzurite runs Azurite's Table service in memory, or returns false.
func startAzurite(b *testing.B) (target, bool) {
	b.Helper()
	bin := os.Getenv("AZURITE_TABLE")
	if bin == "" {
		bin = filepath.Join("..", "js", "node_modules", ".bin", "azurite-table")
	}
	if _, err := os.Stat(bin); err != nil {
		return target{}, false
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--inMemoryPersistence", "--tableHost", "127.0.0.1", "--tablePort", fmt.Sprint(port),
		"--skipApiVersionCheck", "--loose", "--silent", "--disableTelemetry")
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Since(start) > 20*time.Second {
			b.Fatalf("azurite did not listen on %d", port)
		}
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/%s", port, azuriteAccount)
	return tableTarget(tableClient(b, url, azuriteAccount, azuriteKey)), true
}

func run(b *testing.B, op func(ctx context.Context, rng *rand.Rand) error) {
	b.SetParallelism(parallelism)
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			if err := op(ctx, rng); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// serial numbers new keys for inserts, past the loaded records.
var serial atomic.Int64

func benchTargets(b *testing.B) map[string]target {
	table, nosql := startParsec(b)
	out := map[string]target{"table": table, "nosql": nosql}
	if az, ok := startAzurite(b); ok {
		out["azurite"] = az
	}
	return out
}

var order = []string{"table", "nosql", "azurite"}

// BenchmarkInsert inserts new ~1 KB entities (items) with unique keys.
func BenchmarkInsert(b *testing.B) {
	targets := benchTargets(b)
	for _, name := range order {
		t, ok := targets[name]
		if !ok {
			continue
		}
		b.Run(name, func(b *testing.B) {
			run(b, func(ctx context.Context, _ *rand.Rand) error {
				i := int(serial.Add(1)) + records
				pk, rk := key(i)
				return t.insert(ctx, pk, rk)
			})
		})
	}
}

// BenchmarkGet reads random loaded entities (items) by their keys.
func BenchmarkGet(b *testing.B) {
	targets := benchTargets(b)
	for _, name := range order {
		t, ok := targets[name]
		if !ok {
			continue
		}
		load(b, t)
		b.Run(name, func(b *testing.B) {
			run(b, func(ctx context.Context, rng *rand.Rand) error {
				pk, rk := key(rng.IntN(records))
				return t.get(ctx, pk, rk)
			})
		})
	}
}
