package mql

import (
	"math/rand/v2"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func TestSortOrder(t *testing.T) {
	docs := []bson.D{
		doc("_id", int32(0), "a", arr(int32(5), int32(1))),
		doc("_id", int32(1), "a", int32(3)),
		doc("_id", int32(2)),
		doc("_id", int32(3), "a", arr()),
		doc("_id", int32(4), "a", "str"),
		doc("_id", int32(5), "a", nil),
		doc("_id", int32(6), "a", arr(int32(2), int32(9))),
	}
	ids := func(spec bson.D) []int32 {
		s, err := ParseSort(spec)
		if err != nil {
			t.Fatal(err)
		}
		cp := slices.Clone(docs)
		slices.SortStableFunc(cp, s.Compare)
		var out []int32
		for _, d := range cp {
			out = append(out, d[0].Value.(int32))
		}
		return out
	}
	// Ascending by the smallest element: [] (undefined) < missing = null < 1 < 2 < 3 < "str".
	if got, want := ids(doc("a", int32(1))), []int32{3, 2, 5, 0, 6, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("ascending: %v, want %v", got, want)
	}
	// Descending by the largest element: "str" > 9 > 5 > 3 > null = missing > [].
	if got, want := ids(doc("a", int32(-1))), []int32{4, 6, 0, 1, 2, 5, 3}; !slices.Equal(got, want) {
		t.Errorf("descending: %v, want %v", got, want)
	}
}

func TestSortCompound(t *testing.T) {
	s, err := ParseSort(doc("a", int32(1), "b.c", -1.0))
	if err != nil {
		t.Fatal(err)
	}
	x := doc("a", int32(1), "b", doc("c", int32(1)))
	y := doc("a", 1.0, "b", doc("c", int32(2)))
	z := doc("a", int64(2), "b", arr(doc("c", int32(9))))
	if s.Compare(x, y) != 1 || s.Compare(y, x) != -1 {
		t.Errorf("second key descending: %d %d", s.Compare(x, y), s.Compare(y, x))
	}
	if s.Compare(y, z) != -1 {
		t.Error("first key decides")
	}
	if s.Compare(x, x) != 0 {
		t.Error("equal documents")
	}
	empty, err := ParseSort(doc())
	if err != nil || empty.Compare(x, z) != 0 {
		t.Errorf("empty sort: %v", err)
	}
	natural, err := ParseSort(doc("$natural", int32(1)))
	if err != nil || natural.Compare(z, x) != 0 {
		t.Errorf("$natural sort keeps the input order: %v", err)
	}
}

// TestSortIsConsistent checks that Sort.Compare is a total preorder on random documents.
func TestSortIsConsistent(t *testing.T) {
	seed := uint64(7)
	r := rand.New(rand.NewPCG(seed, 2))
	s, err := ParseSort(doc("a", int32(1), "b", int32(-1)))
	if err != nil {
		t.Fatal(err)
	}
	var docs []bson.D
	for i := 0; i < 200; i++ {
		d := bson.D{}
		if r.IntN(4) > 0 {
			d = append(d, bson.E{Key: "a", Value: randomValue(r, 0)})
		}
		if r.IntN(4) > 0 {
			d = append(d, bson.E{Key: "b", Value: randomValue(r, 0)})
		}
		docs = append(docs, d)
	}
	for k := 0; k < 20000; k++ {
		a, b, c := docs[r.IntN(len(docs))], docs[r.IntN(len(docs))], docs[r.IntN(len(docs))]
		if s.Compare(a, b) != -s.Compare(b, a) {
			t.Fatalf("seed %d: antisymmetry fails for %v, %v", seed, a, b)
		}
		if s.Compare(a, b) <= 0 && s.Compare(b, c) <= 0 && s.Compare(a, c) > 0 {
			t.Fatalf("seed %d: transitivity fails for %v, %v, %v", seed, a, b, c)
		}
	}
}

func TestSortErrors(t *testing.T) {
	for _, spec := range []bson.D{
		doc("a", int32(2)),
		doc("a", "asc"),
		doc("a", int32(0)),
		doc("$a", int32(1)),
		doc("a..b", int32(1)),
		doc("a", doc("$meta", "textScore")),
		doc("", int32(1)),
	} {
		if _, err := ParseSort(spec); err == nil {
			t.Errorf("ParseSort(%v): no error", spec)
		} else if _, ok := err.(*Error); !ok {
			t.Errorf("ParseSort(%v): %T is not *Error", spec, err)
		}
	}
}
