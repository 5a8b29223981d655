package synthkey_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parsecdb/parsec/synthkey"
)

// A container of vehicle telemetry keyed by day would put each day's writes
// on one hot partition. Appending a hash of the vehicle identification
// number spreads them over 400 keys, and a reader who knows the VIN and the
// date can still compute the key of a document.
func Example() {
	e := synthkey.MustParse(`concat(/date, ".", hash(/vin, 400))`)

	// The server computes the key from the document on write.
	doc := []byte(`{"id":"r1","vin":"1HGCM82633A004352","date":"2018-08-09","speed":88}`)
	k, err := e.Compute(doc, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(k)

	// A reader computes it from the values it knows.
	k, err = e.FromBase([]any{"2018-08-09", "1HGCM82633A004352"})
	if err != nil {
		panic(err)
	}
	fmt.Println(k)
	// Output:
	// ["2018-08-09.211"]
	// ["2018-08-09.211"]
}

func ExampleParse() {
	for _, s := range []string{
		`/tenantId`,
		`[ /tenantId , /userId ]`,
		`concat( /deviceId,"-",/date )`,
		`concat(/date, ".", random(1, 400))`,
		`concat(/date, ".", random(1, 400)`,
		`[/a, /b, /c, /d]`,
		`concat(/date, ".", hash(/vin, 0))`,
	} {
		e, err := synthkey.Parse(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s  paths %q, levels %d\n", e, e.Paths(), e.Levels())
	}
	// Output:
	// /tenantId  paths ["/tenantId"], levels 1
	// [/tenantId, /userId]  paths ["/tenantId" "/userId"], levels 2
	// concat(/deviceId, "-", /date)  paths ["/deviceId" "/date"], levels 1
	// concat(/date, ".", random(1, 400))  paths ["/date"], levels 1
	// synthkey: at column 34: expected "," or ")" after argument 3 of concat, found end of input
	// synthkey: at column 14: a hierarchical key has at most 3 levels
	// synthkey: at column 31: the bucket count of hash must be from 1 to 1000000, found 0
}

func ExampleExpr_Compute() {
	e := synthkey.MustParse(`[/tenant, concat(/deviceId, "-", /year)]`)
	for _, doc := range []string{
		`{"tenant":"contoso","deviceId":"abc-123","year":2018}`,
		`{"tenant":"contoso","deviceId":"abc-123","year":2018.0}`,
		`{"tenant":"contoso","deviceId":"abc-123"}`,
		`{"deviceId":"abc-123","year":1.5e21}`,
	} {
		k, err := e.Compute([]byte(doc), nil)
		var ve *synthkey.ValueError
		switch {
		case errors.As(err, &ve):
			fmt.Printf("no key: %s missing=%v\n", ve.Path, ve.Missing)
		case err != nil:
			fmt.Println(err)
		default:
			fmt.Println(k)
		}
	}
	// Output:
	// ["contoso","abc-123-2018"]
	// ["contoso","abc-123-2018"]
	// no key: /year missing=true
	// [{},"abc-123-1.5e+21"]
}

// A point read of a document written with a random suffix must try every
// key the suffix allows.
func ExampleExpr_Expand() {
	e := synthkey.MustParse(`concat(/date, ".", random(1, 4))`)
	keys, err := e.Expand([]any{"2018-08-09"})
	if err != nil {
		panic(err)
	}
	for _, k := range keys {
		header, _ := json.Marshal(k) // the x-ms-documentdb-partitionkey header value
		fmt.Println(string(header))
	}

	// Any key Compute draws is one of them.
	k, _ := e.Compute([]byte(`{"date":"2018-08-09"}`), nil)
	for _, x := range keys {
		if x.Equal(k) {
			fmt.Println("found")
		}
	}
	// Output:
	// ["2018-08-09.1"]
	// ["2018-08-09.2"]
	// ["2018-08-09.3"]
	// ["2018-08-09.4"]
	// found
}

func ExampleHash() {
	fmt.Println(synthkey.Hash("1HGCM82633A004352", 400))
	fmt.Println(synthkey.Hash(7, 400), synthkey.Hash(7.0, 400), synthkey.Hash("7", 400))
	fmt.Println(synthkey.Hash(true, 400), synthkey.Hash(nil, 400))
	// Output:
	// 211
	// 247 247 247
	// 54 341
}
