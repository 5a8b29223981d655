package mql

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func mustMarshal(f *testing.F, d bson.D) []byte {
	f.Helper()
	b, err := bson.Marshal(d)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// decodeDoc decodes fuzz bytes as a document; invalid BSON is skipped.
func decodeDoc(b []byte) (bson.D, bool) {
	var d bson.D
	if err := bson.Unmarshal(b, &d); err != nil {
		return nil, false
	}
	return d, true
}

// FuzzFilter checks that parsing any document as a filter and matching it against any document
// never panics, and that a parse failure is an *Error.
func FuzzFilter(f *testing.F) {
	target := doc("_id", int32(1), "a", arr(int32(1), doc("b", "x")), "s", "str", "n", nil)
	for _, filter := range []bson.D{
		doc("a", int32(1)),
		doc("a.b", doc("$in", arr("x", bson.Regex{Pattern: "^x", Options: "i"}))),
		doc("$or", arr(doc("s", doc("$regex", "s.r", "$options", "x")), doc("a", doc("$elemMatch", doc("b", doc("$exists", true)))))),
		doc("a", doc("$all", arr(int32(1)), "$size", int32(2), "$not", doc("$gt", 5.5))),
		doc("n", doc("$type", arr("null", "number")), "a", doc("$mod", arr(int32(2), int32(1)))),
		doc("$expr", doc("$eq", arr("$s", doc("$concat", arr("st", "r"))))),
	} {
		f.Add(mustMarshal(f, filter), mustMarshal(f, target))
	}
	f.Fuzz(func(t *testing.T, filterBytes, docBytes []byte) {
		fd, ok := decodeDoc(filterBytes)
		if !ok {
			return
		}
		d, ok := decodeDoc(docBytes)
		if !ok {
			return
		}
		flt, err := ParseFilter(fd)
		if err != nil {
			if _, isErr := err.(*Error); !isErr {
				t.Fatalf("ParseFilter error %T is not *Error: %v", err, err)
			}
			return
		}
		flt.Match(d)
		UpsertSeed(flt)
		for _, e := range fd {
			flt.Equality(e.Key)
		}
	})
}

// FuzzUpdate checks that parsing any document as an update and applying it to any document never
// panics, that failures are *Error, and that Apply leaves its input unchanged.
func FuzzUpdate(f *testing.F) {
	target := doc("_id", int32(1), "a", arr(int32(1), doc("b", "x")), "n", int32(5), "s", "str")
	for _, u := range []bson.D{
		doc("$set", doc("a.1.b", "y", "z.w", int32(1))),
		doc("$inc", doc("n", int64(2)), "$unset", doc("s", "")),
		doc("$push", doc("a", doc("$each", arr(int32(3), int32(0)), "$sort", int32(1), "$slice", int32(-2), "$position", int32(0)))),
		doc("$pull", doc("a", doc("b", "x")), "$addToSet", doc("t", doc("$each", arr(int32(1), int32(1))))),
		doc("$rename", doc("s", "r"), "$min", doc("n", int32(1)), "$max", doc("m", "x"), "$mul", doc("k", 2.5)),
		doc("$set", doc("a.$[].c", true), "$pop", doc("q", int32(-1)), "$currentDate", doc("d", true)),
	} {
		f.Add(mustMarshal(f, u), mustMarshal(f, target), true)
	}
	f.Fuzz(func(t *testing.T, updateBytes, docBytes []byte, insert bool) {
		ud, ok := decodeDoc(updateBytes)
		if !ok {
			return
		}
		d, ok := decodeDoc(docBytes)
		if !ok {
			return
		}
		upd, err := ParseUpdate(ud, nil)
		if err != nil {
			if _, isErr := err.(*Error); !isErr {
				t.Fatalf("ParseUpdate error %T is not *Error: %v", err, err)
			}
			return
		}
		before := formatValue(d)
		_, _, err = upd.Apply(d, insert, time.Unix(1700000000, 0))
		if err != nil {
			if _, isErr := err.(*Error); !isErr {
				t.Fatalf("Apply error %T is not *Error: %v", err, err)
			}
		}
		if formatValue(d) != before {
			t.Fatalf("Apply modified its input")
		}
	})
}

// FuzzProjectionSort checks that parsing any document as a projection and as a sort and applying
// them never panics.
func FuzzProjectionSort(f *testing.F) {
	target := doc("_id", int32(1), "a", arr(int32(1), doc("b", "x", "c", int32(2))), "s", "str")
	for _, p := range []bson.D{
		doc("a.b", int32(1), "_id", int32(0)),
		doc("a", doc("$slice", arr(int32(-1), int32(1))), "s", int32(0)),
		doc("a", doc("$elemMatch", doc("b", "x")), "t", doc("$concat", arr("$s", "!"))),
		doc("a.$", int32(1)),
	} {
		f.Add(mustMarshal(f, p), mustMarshal(f, target))
	}
	f.Fuzz(func(t *testing.T, specBytes, docBytes []byte) {
		spec, ok := decodeDoc(specBytes)
		if !ok {
			return
		}
		d, ok := decodeDoc(docBytes)
		if !ok {
			return
		}
		if p, err := ParseProjection(spec); err == nil {
			q, _ := ParseFilter(doc("a", int32(1)))
			if _, err := p.ApplyWithQuery(d, q); err != nil {
				if _, isErr := err.(*Error); !isErr {
					t.Fatalf("projection error %T is not *Error", err)
				}
			}
		} else if _, isErr := err.(*Error); !isErr {
			t.Fatalf("ParseProjection error %T is not *Error", err)
		}
		if s, err := ParseSort(spec); err == nil {
			s.Compare(d, spec)
		} else if _, isErr := err.(*Error); !isErr {
			t.Fatalf("ParseSort error %T is not *Error", err)
		}
	})
}

// FuzzPipeline checks that any document whose values are stages parses and runs without panicking
// over a few documents (and the decoded document itself).
func FuzzPipeline(f *testing.F) {
	target := doc("_id", int32(1), "a", arr(int32(1), doc("b", "x")), "n", int32(5), "s", "str")
	for _, p := range []bson.D{
		doc("1", doc("$match", doc("n", doc("$gt", int32(1)))), "2", doc("$group", doc("_id", "$s", "t", doc("$sum", "$n"), "l", doc("$push", "$a")))),
		doc("1", doc("$unwind", doc("path", "$a", "includeArrayIndex", "i")), "2", doc("$sort", doc("i", int32(-1))), "3", doc("$limit", int32(2))),
		doc("1", doc("$addFields", doc("x.y", doc("$cond", arr(doc("$gte", arr("$n", int32(3))), doc("$toString", "$n"), "$$REMOVE")))), "2", doc("$count", "c")),
		doc("1", doc("$lookup", doc("from", "c", "localField", "a.b", "foreignField", "s", "as", "j")), "2", doc("$replaceRoot", doc("newRoot", doc("$mergeObjects", arr("$$ROOT", doc("k", int32(1))))))),
	} {
		f.Add(mustMarshal(f, p), mustMarshal(f, target))
	}
	f.Fuzz(func(t *testing.T, pipeBytes, docBytes []byte) {
		spec, ok := decodeDoc(pipeBytes)
		if !ok {
			return
		}
		d, ok := decodeDoc(docBytes)
		if !ok {
			return
		}
		var stages []bson.D
		for _, e := range spec {
			if s, ok := e.Value.(bson.D); ok {
				stages = append(stages, s)
			}
		}
		lookup := func(string) ([]bson.D, error) { return []bson.D{d, target}, nil }
		p, err := ParsePipeline(stages, lookup)
		if err != nil {
			if _, isErr := err.(*Error); !isErr {
				t.Fatalf("ParsePipeline error %T is not *Error", err)
			}
			return
		}
		if _, err := p.Run([]bson.D{d, target, spec}); err != nil {
			if _, isErr := err.(*Error); !isErr {
				t.Fatalf("Run error %T is not *Error: %v", err, err)
			}
		}
	})
}
