package gosdk

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// The container's vector embedding policy, vector indexes, full-text policy
// and full-text indexes round-trip through azcosmos v1.5.0's
// ContainerProperties, as its emulator tests TestContainerVectorSearch and
// TestContainerFullTextSearch (emulator_cosmos_container_test.go) check;
// the vector policy cannot change in a replace; and the Go SDK, which sends
// queries to the server as they are, gets vector and full-text results
// merged across partitions by the server.
func TestSearchPoliciesAndQueries(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	_, err := c.CreateDatabase(ctx(), azcosmos.DatabaseProperties{ID: "search"}, nil)
	must(t, err, "create database")
	d, err := c.NewDatabase("search")
	must(t, err, "database client")
	props := azcosmos.ContainerProperties{
		ID:                     "docs",
		PartitionKeyDefinition: hashPK("/pk"),
		VectorEmbeddingPolicy: &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: []azcosmos.VectorEmbedding{
			{Path: "/embedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionCosine, Dimensions: 3},
			{Path: "/textEmbedding", DataType: azcosmos.VectorDataTypeFloat32, DistanceFunction: azcosmos.VectorDistanceFunctionEuclidean, Dimensions: 3},
		}},
		FullTextPolicy: &azcosmos.FullTextPolicy{DefaultLanguage: "en-US", FullTextPaths: []azcosmos.FullTextPath{{Path: "/text", Language: "en-US"}}},
		IndexingPolicy: &azcosmos.IndexingPolicy{
			Automatic: true, IndexingMode: azcosmos.IndexingModeConsistent,
			IncludedPaths: []azcosmos.IncludedPath{{Path: "/*"}},
			ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/embedding/*"}, {Path: "/textEmbedding/*"}},
			VectorIndexes: []azcosmos.VectorIndex{
				{Path: "/embedding", Type: azcosmos.VectorIndexTypeDiskANN},
				{Path: "/textEmbedding", Type: azcosmos.VectorIndexTypeFlat},
			},
			FullTextIndexes: []azcosmos.FullTextIndex{{Path: "/text"}},
		},
	}
	tp := azcosmos.NewManualThroughputProperties(24000)
	_, err = d.CreateContainer(ctx(), props, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
	must(t, err, "create container")
	cc, err := d.NewContainer("docs")
	must(t, err, "container client")
	resp, err := cc.Read(ctx(), nil)
	must(t, err, "read container")
	got := resp.ContainerProperties
	if !slices.Equal(got.VectorEmbeddingPolicy.VectorEmbeddings, props.VectorEmbeddingPolicy.VectorEmbeddings) {
		t.Errorf("vector embeddings: got %+v", got.VectorEmbeddingPolicy)
	}
	if !slices.Equal(got.IndexingPolicy.VectorIndexes, props.IndexingPolicy.VectorIndexes) ||
		!slices.Equal(got.IndexingPolicy.FullTextIndexes, props.IndexingPolicy.FullTextIndexes) {
		t.Errorf("indexes: got %+v %+v", got.IndexingPolicy.VectorIndexes, got.IndexingPolicy.FullTextIndexes)
	}
	if got.FullTextPolicy == nil || got.FullTextPolicy.DefaultLanguage != "en-US" || !slices.Equal(got.FullTextPolicy.FullTextPaths, props.FullTextPolicy.FullTextPaths) {
		t.Errorf("full-text policy: got %+v", got.FullTextPolicy)
	}

	// A read-modify-write that changes only the TTL succeeds; one that
	// changes a vector index or the embedding policy is refused.
	ttl := int32(600)
	got.DefaultTimeToLive = &ttl
	_, err = cc.Replace(ctx(), *got, nil)
	must(t, err, "replace keeping the vector policy")
	changed := *got
	ip := *got.IndexingPolicy
	ip.VectorIndexes = []azcosmos.VectorIndex{{Path: "/embedding", Type: azcosmos.VectorIndexTypeQuantizedFlat}, {Path: "/textEmbedding", Type: azcosmos.VectorIndexTypeFlat}}
	changed.IndexingPolicy = &ip
	_, err = cc.Replace(ctx(), changed, nil)
	wantStatus(t, err, http.StatusBadRequest, "replace changing a vector index")
	changed = *got
	changed.VectorEmbeddingPolicy = &azcosmos.VectorEmbeddingPolicy{VectorEmbeddings: got.VectorEmbeddingPolicy.VectorEmbeddings[:1]}
	_, err = cc.Replace(ctx(), changed, nil)
	wantStatus(t, err, http.StatusBadRequest, "replace changing the embedding policy")

	// Items over the partitions.
	texts := []string{"red bicycle", "blue car", "red car and red bicycle", "green tree", "a red apple"}
	for i := 0; i < 30; i++ {
		a := float64(i) / 5
		doc := map[string]any{"id": fmt.Sprint(i), "pk": fmt.Sprint("k", i), "embedding": []float64{math.Cos(a), math.Sin(a), 0.5},
			"textEmbedding": []float64{float64(i), 1, 0}, "text": texts[i%len(texts)]}
		b, _ := json.Marshal(doc)
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(fmt.Sprint("k", i)), b, nil)
		must(t, err, "create item")
	}
	query := func(q string) []map[string]any {
		t.Helper()
		var out []map[string]any
		pager := cc.NewQueryItemsPager(q, azcosmos.NewPartitionKey(), &azcosmos.QueryOptions{PageSizeHint: 3})
		for pager.More() {
			page, err := pager.NextPage(ctx())
			must(t, err, q)
			for _, it := range page.Items {
				var m map[string]any
				must(t, json.Unmarshal(it, &m), "row")
				out = append(out, m)
			}
		}
		return out
	}
	// Cosine to [1, 0, 0.5]: the policy's function, closest first.
	rows := query("SELECT TOP 5 c.id, VectorDistance(c.embedding, [1, 0, 0.5]) AS score FROM c ORDER BY VectorDistance(c.embedding, [1, 0, 0.5])")
	type scored struct {
		id    string
		score float64
	}
	var want []scored
	for i := 0; i < 30; i++ {
		a := float64(i) / 5
		v := []float64{math.Cos(a), math.Sin(a), 0.5}
		dot := v[0] + v[2]*0.5
		want = append(want, scored{fmt.Sprint(i), dot / (math.Sqrt(1.25) * math.Sqrt(1.25))})
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].score > want[j].score })
	if len(rows) != 5 {
		t.Fatalf("got %d rows, want 5", len(rows))
	}
	for i, r := range rows {
		if r["id"] != want[i].id || math.Abs(r["score"].(float64)-want[i].score) > 1e-5 {
			t.Errorf("row %d: got %v, want %+v", i, r, want[i])
		}
	}
	// Euclidean, the other path's function: closest (smallest) first.
	var ids []string
	pager := cc.NewQueryItemsPager("SELECT TOP 3 VALUE c.id FROM c ORDER BY VectorDistance(c.textEmbedding, [10.2, 1, 0])", azcosmos.NewPartitionKey(), nil)
	for pager.More() {
		page, err := pager.NextPage(ctx())
		must(t, err, "euclidean query")
		for _, it := range page.Items {
			var id string
			must(t, json.Unmarshal(it, &id), "id")
			ids = append(ids, id)
		}
	}
	if fmt.Sprint(ids) != "[10 11 9]" {
		t.Errorf("euclidean order: got %v, want [10 11 9]", ids)
	}
	// Full-text filter and ranking: "red" appears in texts 0, 2 (twice), 4.
	rows = query("SELECT c.id, c.text FROM c WHERE FullTextContains(c.text, 'red') ORDER BY RANK FullTextScore(c.text, 'red')")
	if len(rows) != 18 {
		t.Fatalf("got %d rows with red, want 18", len(rows))
	}
	for i := 0; i < 6; i++ {
		if rows[i]["text"] != "red car and red bicycle" {
			t.Errorf("rank %d: %v, want the text with red twice first", i, rows[i])
		}
	}
	// ORDER BY RANK with a sort order is refused.
	pager = cc.NewQueryItemsPager("SELECT c.id FROM c ORDER BY RANK FullTextScore(c.text, 'red') ASC", azcosmos.NewPartitionKey(), nil)
	_, err = pager.NextPage(ctx())
	wantStatus(t, err, http.StatusBadRequest, "ORDER BY RANK ... ASC")
}
