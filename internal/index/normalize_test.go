package index

import "testing"

func TestNormalize(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := Normalize([]byte(in))
		if err != nil {
			t.Fatalf("Normalize(%s): %v", in, err)
		}
		if string(got) != want {
			t.Fatalf("Normalize(%s):\n got %s\nwant %s", in, got, want)
		}
		if _, err := Compile(got); err != nil {
			t.Fatalf("Compile(Normalize(%s)): %v", in, err)
		}
	}
	const dflt = `{"automatic":true,"excludedPaths":[{"path":"/\"_etag\"/?"}],"includedPaths":[{"path":"/*"}],"indexingMode":"consistent"}`
	f(`{}`, dflt)
	f(`{"indexingMode":"Consistent","automatic":true,"includedPaths":[{"path":"/","indexes":[{"kind":"Hash","dataType":"String","precision":3},{"kind":"Range","dataType":"Number","precision":-1}]}],"excludedPaths":[]}`, dflt)
	f(`{"includedPaths":[{"path":"/*","indexes":[{"kind":"Spatial","dataType":"Point"}]}]}`, dflt)
	f(`{"indexingMode":"consistent","includedPaths":[{"path":"/a/?"}],"excludedPaths":[{"path":"/*"}],"compositeIndexes":[[{"path":"/a","order":"ascending"}]]}`,
		`{"automatic":true,"compositeIndexes":[[{"path":"/a","order":"ascending"}]],"excludedPaths":[{"path":"/*"},{"path":"/\"_etag\"/?"}],"includedPaths":[{"path":"/a/?"}],"indexingMode":"consistent"}`)
	f(`{"excludedPaths":[{"path":"/\"_etag\"/?"}],"includedPaths":[{"path":"/*"}]}`, dflt)
	f(`{"indexingMode":"None","automatic":false}`, `{"automatic":false,"excludedPaths":[],"includedPaths":[],"indexingMode":"none"}`)

	bad := func(in string) {
		t.Helper()
		if _, err := Normalize([]byte(in)); err == nil {
			t.Fatalf("Normalize(%s) accepted it", in)
		}
	}
	bad(`[]`)
	bad(`{"includedPaths":[{"path":"/*","indexes":[{"kind":"Btree"}]}]}`)
	bad(`{"includedPaths":[{"path":"/*","indexes":[{"kind":"Range","dataType":"Date"}]}]}`)
	bad(`{"includedPaths":[{"indexes":[]}]}`)
	bad(`{"includedPaths":["/*"]}`)
}
