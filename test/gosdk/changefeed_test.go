package gosdk

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// drainChangeFeed reads the change feed with the Go SDK until a call
// returns nothing new, and returns every change read (id → the "v" of each
// version seen, in order) and the composite continuation token to go on
// from.
func drainChangeFeed(t *testing.T, cc *azcosmos.ContainerClient, opts azcosmos.ChangeFeedOptions) (map[string][]int, string) {
	t.Helper()
	seen := map[string][]int{}
	for range 1000 {
		resp, err := cc.ReadChangeFeed(ctx(), &opts)
		must(t, err, "ReadChangeFeed")
		for _, raw := range resp.Items {
			var d struct {
				ID string `json:"id"`
				V  int    `json:"v"`
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatal(err)
			}
			seen[d.ID] = append(seen[d.ID], d.V)
		}
		tok := resp.ContinuationToken
		if tok == "" {
			t.Fatal("the change feed response has no continuation token")
		}
		opts = azcosmos.ChangeFeedOptions{Continuation: &tok, MaxItemCount: opts.MaxItemCount}
		if len(resp.Items) == 0 {
			return seen, tok
		}
	}
	t.Fatal("the change feed never ran dry")
	return nil, ""
}

// TestChangeFeedThroughSplits reads the change feed with the Go SDK from the
// beginning, then writes and updates items while the container splits for
// storage, and goes on from the continuation token: every change arrives
// once, in its latest version, and the SDK follows the splits by itself.
func TestChangeFeedThroughSplits(t *testing.T) {
	s := startServer(t, server.Options{PartitionMaxBytes: 256 << 10, NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "feed", hashPK("/pk"), 400)
	pad := strings.Repeat("z", 1000)
	put := func(id string, v int) {
		pk := fmt.Sprint("p", len(id)%7, id[len(id)-1:])
		_, err := cc.UpsertItem(ctx(), azcosmos.NewPartitionKeyString(pk), []byte(fmt.Sprintf(`{"id":%q,"pk":%q,"v":%d,"pad":%q}`, id, pk, v, pad)), nil)
		must(t, err, "upsert "+id)
	}
	for i := range 100 {
		put(fmt.Sprint("a", i), 1)
	}
	frs, err := cc.ReadFeedRanges(ctx(), nil)
	must(t, err, "ReadFeedRanges")
	if len(frs) != 1 {
		t.Fatalf("%d feed ranges before any split, want 1", len(frs))
	}
	seen, tok := drainChangeFeed(t, cc, azcosmos.ChangeFeedOptions{FeedRange: &frs[0], MaxItemCount: 17})
	if len(seen) != 100 {
		t.Fatalf("from the beginning: %d items, want 100", len(seen))
	}
	for id, vs := range seen {
		if !slices.Equal(vs, []int{1}) {
			t.Fatalf("%s seen as versions %v, want [1]", id, vs)
		}
	}

	// 600 new items of 1 KB split the container; every third old item is
	// updated twice, and only its last version is a change to read.
	for i := range 600 {
		put(fmt.Sprint("b", i), 1)
		if i%6 == 0 && i/6 < 100 && (i/6)%3 == 0 {
			put(fmt.Sprint("a", i/6), 2)
			put(fmt.Sprint("a", i/6), 3)
		}
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	if rs := ranges(t, raw, "db", "feed"); len(rs) < 2 {
		t.Fatalf("the container did not split: %d ranges", len(rs))
	}
	seen, _ = drainChangeFeed(t, cc, azcosmos.ChangeFeedOptions{Continuation: &tok, MaxItemCount: 23})
	want := map[string][]int{}
	for i := range 600 {
		want[fmt.Sprint("b", i)] = []int{1}
	}
	for i := 0; i < 100; i += 3 {
		want[fmt.Sprint("a", i)] = []int{3}
	}
	if !maps.EqualFunc(seen, want, slices.Equal) {
		var extra, missing []string
		for id := range seen {
			if !slices.Equal(seen[id], want[id]) {
				extra = append(extra, fmt.Sprint(id, seen[id]))
			}
		}
		for id := range want {
			if _, ok := seen[id]; !ok {
				missing = append(missing, id)
			}
		}
		t.Fatalf("after the splits: %d changes, want %d; wrong %v; missing %v", len(seen), len(want), extra, missing)
	}
}

// TestChangeFeedStartsAndErrors: by partition key and from a point in time
// through the SDK; from now, and the errors, over the protocol.
func TestChangeFeedStartsAndErrors(t *testing.T) {
	s := startServer(t, server.Options{NoThrottle: true})
	c := newClient(t, s, auth.EmulatorKey, nil)
	cc := setup(t, c, "db", "feed", hashPK("/pk"), 400)
	for i := range 10 {
		_, err := cc.CreateItem(ctx(), azcosmos.NewPartitionKeyString(fmt.Sprint("k", i%2)), []byte(fmt.Sprintf(`{"id":"x%d","pk":"k%d","v":1}`, i, i%2)), nil)
		must(t, err, "create")
	}
	pk := azcosmos.NewPartitionKeyString("k1")
	ranges, err := cc.ReadFeedRanges(ctx(), nil)
	must(t, err, "ReadFeedRanges")
	seen, _ := drainChangeFeed(t, cc, azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], PartitionKey: &pk})
	if ids := slices.Sorted(maps.Keys(seen)); !slices.Equal(ids, []string{"x1", "x3", "x5", "x7", "x9"}) {
		t.Fatalf("by partition key k1: %v", ids)
	}
	future := time.Now().Add(time.Hour)
	seen, _ = drainChangeFeed(t, cc, azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], StartFrom: &future})
	if len(seen) != 0 {
		t.Fatalf("from an hour ahead: %v", seen)
	}
	past := time.Now().Add(-time.Hour)
	seen, _ = drainChangeFeed(t, cc, azcosmos.ChangeFeedOptions{FeedRange: &ranges[0], StartFrom: &past})
	if len(seen) != 10 {
		t.Fatalf("from an hour ago: %d items, want 10", len(seen))
	}

	raw := newRaw(t, s, auth.EmulatorKey)
	feed := func(hdr map[string]string) rawResp {
		h := map[string]string{"A-IM": "Incremental feed", "x-ms-documentdb-partitionkeyrangeid": "0"}
		for k, v := range hdr {
			h[k] = v
		}
		return raw.do(t, "GET", "/dbs/db/colls/feed/docs", nil, h)
	}
	now := feed(map[string]string{"If-None-Match": "*"})
	if now.Status != 304 || now.Header.Get("Etag") == "" {
		t.Fatalf("from now: %d, etag %q", now.Status, now.Header.Get("Etag"))
	}
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"late","pk":"k1","v":1}`), nil)
	must(t, err, "create late")
	r := feed(map[string]string{"If-None-Match": now.Header.Get("Etag")})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"id":"late"`) || strings.Contains(string(r.Body), `"x1"`) {
		t.Fatalf("after the position from now: %d %s", r.Status, r.Body)
	}
	if again := feed(map[string]string{"If-None-Match": r.Header.Get("Etag")}); again.Status != 304 || again.Header.Get("Etag") != r.Header.Get("Etag") {
		t.Fatalf("nothing new: %d, etag %q then %q", again.Status, r.Header.Get("Etag"), again.Header.Get("Etag"))
	}
	for _, bad := range []struct {
		hdr    map[string]string
		status int
		msg    string
	}{
		{map[string]string{"If-None-Match": `"abc"`}, 400, "is not a change feed continuation"},
		{map[string]string{"If-None-Match": "", "If-Modified-Since": "yesterday"}, 400, "is not an HTTP date"},
		{map[string]string{"A-IM": "Everything"}, 400, "is not a change feed mode"},
		{map[string]string{"x-ms-documentdb-partitionkeyrangeid": "7"}, 410, "not a current range"},
	} {
		r := feed(bad.hdr)
		if r.Status != bad.status || !strings.Contains(string(r.Body), bad.msg) {
			t.Errorf("%v: %d %s, want %d with %q", bad.hdr, r.Status, r.Body, bad.status, bad.msg)
		}
	}
}
