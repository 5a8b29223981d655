package memgraph

import (
	"context"
	"errors"
	"testing"

	"github.com/parsecdb/parsec/internal/api/gremlin/graph"
	"github.com/parsecdb/parsec/internal/api/gremlin/lang"
)

func vtx(id string, pk any) *graph.Vertex {
	return &graph.Vertex{ID: id, Label: "x", PartitionKey: pk,
		Properties: map[string][]*graph.VertexProperty{"pk": {{ID: id + "p", Key: "pk", Value: pk}}}, Keys: []string{"pk"}}
}

func TestApplyAtomicPerPartition(t *testing.T) {
	ctx := context.Background()
	g := New("pk")
	if _, err := g.Apply(ctx, []graph.Mutation{{Kind: graph.AddVertex, Vertex: vtx("a", "p1")}}); err != nil {
		t.Fatal(err)
	}
	// p2 commits; p1's group fails on the duplicate and leaves p1 as it was.
	_, err := g.Apply(ctx, []graph.Mutation{
		{Kind: graph.AddVertex, Vertex: vtx("b", "p2")},
		{Kind: graph.AddVertex, Vertex: vtx("c", "p1")},
		{Kind: graph.AddVertex, Vertex: vtx("a", "p1")},
	})
	var pw *graph.PartialWriteError
	if !errors.As(err, &pw) || pw.Written != 1 || !errors.Is(err, ErrConflict) {
		t.Fatalf("apply: %v", err)
	}
	vs, op, _ := g.Vertices(ctx, graph.VertexQuery{PartitionKeys: []any{"p1"}})
	if len(vs) != 1 || op.Partitions != 1 {
		t.Fatalf("p1 after failed group: %d vertices, %d partitions", len(vs), op.Partitions)
	}
	vs, op, _ = g.Vertices(ctx, graph.VertexQuery{Has: []graph.Has{{Key: "pk", P: lang.P{Op: "eq", Args: []lang.Value{"p2"}}}}})
	if len(vs) != 1 || vs[0].ID != "b" || op.Partitions != 2 || op.Index != IndexProperty {
		t.Fatalf("unrouted read: %v %+v", vs, op)
	}
	// Reads return copies: changing one leaves the store as it was.
	vs[0].Label = "changed"
	vs, _, _ = g.Vertices(ctx, graph.VertexQuery{IDs: []string{"b"}})
	if vs[0].Label != "x" {
		t.Fatal("a read shares the store's vertex")
	}
}

func TestNumericPartitionKeys(t *testing.T) {
	ctx := context.Background()
	g := New("pk")
	if _, err := g.Apply(ctx, []graph.Mutation{{Kind: graph.AddVertex, Vertex: vtx("a", int64(7))}}); err != nil {
		t.Fatal(err)
	}
	// An int32 literal names the partition an int64 was stored under.
	vs, op, _ := g.Vertices(ctx, graph.VertexQuery{PartitionKeys: []any{int32(7)}})
	if len(vs) != 1 || op.Partitions != 1 {
		t.Fatalf("numeric routing: %d vertices, %+v", len(vs), op)
	}
}

func TestVertexRefs(t *testing.T) {
	ctx := context.Background()
	g := New("pk")
	var ms []graph.Mutation
	for _, v := range []*graph.Vertex{vtx("a", "p1"), vtx("a", "p2"), vtx("b", "p1"), vtx("b", "p3")} {
		ms = append(ms, graph.Mutation{Kind: graph.AddVertex, Vertex: v})
	}
	if _, err := g.Apply(ctx, ms); err != nil {
		t.Fatal(err)
	}
	vs, op, err := g.Vertices(ctx, graph.VertexQuery{Refs: []graph.Ref{{ID: "a", PartitionKey: "p2"}, {ID: "b", PartitionKey: int64(9)}, {ID: "b", PartitionKey: "p1"}}})
	if err != nil || len(vs) != 2 || vs[0].PartitionKey != "p2" || vs[1].ID != "b" || vs[1].PartitionKey != "p1" || op.Count != 2 || op.Partitions != 3 {
		t.Fatalf("refs: %v %+v %v", vs, op, err)
	}
	vs, _, _ = g.Vertices(ctx, graph.VertexQuery{Refs: []graph.Ref{{ID: "b"}}})
	if len(vs) != 2 {
		t.Fatalf("unkeyed ref: %d vertices", len(vs))
	}
}
