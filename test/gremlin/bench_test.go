package gremlin

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/epk"
	"github.com/parsecdb/parsec/internal/server"
)

// The benchmarks compare graph reads through the Gremlin API (gremlin-go,
// GraphBinary) with the equivalent NoSQL point reads (the Go SDK) on one
// in-memory server without throttling: a social graph of benchVertices
// people, each in its own logical partition, each knowing benchDegree
// others at random. Run with
//
//	go test -run '^$' -bench . ./test/gremlin/
const (
	benchVertices = 500
	benchDegree   = 5
)

type benchEnv struct {
	g     *gremlingo.Client
	items *azcosmos.ContainerClient
}

func setupBench(b *testing.B) *benchEnv {
	b.Helper()
	s, err := server.Start(server.Options{InMemory: true, Listen: "127.0.0.1:0", GremlinListen: "127.0.0.1:0", NoThrottle: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Shutdown(context.Background()) })
	if _, err := s.Engine().CreateDatabase("graphdb", engine.Throughput{}); err != nil {
		b.Fatal(err)
	}
	spec := engine.ContainerSpec{ID: "social", PartitionKey: epk.Definition{Kind: "Hash", Version: 2, Paths: []string{"/pk"}}}
	if _, err := s.Engine().CreateContainer("graphdb", spec, engine.Throughput{RUs: 10000}); err != nil {
		b.Fatal(err)
	}
	g, err := gremlingo.NewClient(s.GremlinURL(), func(cs *gremlingo.ClientSettings) {
		cs.AuthInfo = gremlingo.BasicAuthInfo("/dbs/graphdb/colls/social", auth.EmulatorKey)
		cs.LogVerbosity = gremlingo.Off
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(g.Close)
	run := func(script string, bindings map[string]any) {
		rs, err := g.Submit(script, bindings)
		if err == nil {
			_, err = rs.All()
		}
		if err != nil {
			b.Fatalf("%s: %v", script, err)
		}
	}
	for i := range benchVertices {
		run("g.addV('person').property('id', vid).property('pk', vid).property('name', vid)", map[string]any{"vid": fmt.Sprint("p", i)})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range benchVertices {
		for range benchDegree {
			j := rng.IntN(benchVertices)
			run("g.V([a, a]).addE('knows').to(g.V([c, c]))", map[string]any{"a": fmt.Sprint("p", i), "c": fmt.Sprint("p", j)})
		}
	}
	cred, err := azcosmos.NewKeyCredential(auth.EmulatorKey)
	if err != nil {
		b.Fatal(err)
	}
	cc, err := azcosmos.NewClientWithKey(s.URL()+"/", cred, nil)
	if err != nil {
		b.Fatal(err)
	}
	items, err := cc.NewContainer("graphdb", "social")
	if err != nil {
		b.Fatal(err)
	}
	return &benchEnv{g: g, items: items}
}

func benchScript(b *testing.B, env *benchEnv, script string, want func([]*gremlingo.Result) bool) {
	rng := rand.New(rand.NewPCG(3, 4))
	b.ResetTimer()
	for b.Loop() {
		id := fmt.Sprint("p", rng.IntN(benchVertices))
		rs, err := env.g.Submit(script, map[string]any{"vid": id})
		if err != nil {
			b.Fatal(err)
		}
		r, err := rs.All()
		if err != nil {
			b.Fatal(err)
		}
		if !want(r) {
			b.Fatalf("%s for %s: %v", script, id, r)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkGremlinOneHop: the names of the people one knows, from a vertex
// addressed by [pk, id].
func BenchmarkGremlinOneHop(b *testing.B) {
	env := setupBench(b)
	benchScript(b, env, "g.V([vid, vid]).out('knows').values('name')", func(r []*gremlingo.Result) bool { return len(r) <= benchDegree })
}

// BenchmarkGremlinTwoHopCount: how many people are two hops away.
func BenchmarkGremlinTwoHopCount(b *testing.B) {
	env := setupBench(b)
	benchScript(b, env, "g.V([vid, vid]).out('knows').out('knows').count()", func(r []*gremlingo.Result) bool { return len(r) == 1 })
}

// BenchmarkNoSQLPointRead: the vertex's item read through the NoSQL API by
// partition key and id, the cheapest read there is.
func BenchmarkNoSQLPointRead(b *testing.B) {
	env := setupBench(b)
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		id := fmt.Sprint("p", rng.IntN(benchVertices))
		if _, err := env.items.ReadItem(ctx, azcosmos.NewPartitionKeyString(id), id, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkNoSQLOneHop: the same one-hop read done by hand through the
// NoSQL API: the vertex's out-edges from its partition (a query), then a
// point read of each neighbour.
func BenchmarkNoSQLOneHop(b *testing.B) {
	env := setupBench(b)
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		id := fmt.Sprint("p", rng.IntN(benchVertices))
		pk := azcosmos.NewPartitionKeyString(id)
		q := env.items.NewQueryItemsPager("SELECT c._sink, c._sinkPartition FROM c WHERE c._isEdge = true AND c._vertexId = @v", pk,
			&azcosmos.QueryOptions{QueryParameters: []azcosmos.QueryParameter{{Name: "@v", Value: id}}})
		var sinks []struct {
			ID string `json:"_sink"`
			PK string `json:"_sinkPartition"`
		}
		for q.More() {
			page, err := q.NextPage(ctx)
			if err != nil {
				b.Fatal(err)
			}
			for _, it := range page.Items {
				var s struct {
					ID string `json:"_sink"`
					PK string `json:"_sinkPartition"`
				}
				if err := json.Unmarshal(it, &s); err != nil {
					b.Fatal(err)
				}
				sinks = append(sinks, s)
			}
		}
		if len(sinks) == 0 || len(sinks) > benchDegree {
			b.Fatalf("%d edges out of %s", len(sinks), id)
		}
		for _, s := range sinks {
			if _, err := env.items.ReadItem(ctx, azcosmos.NewPartitionKeyString(s.PK), s.ID, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
