package gosdk

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// TestConsistencyLevels checks the account's default consistency: the
// account resource reports it as the SDKs read it, a request may ask for
// a weaker level and reads its write, and a stronger level or an unknown
// one is a 400 with the service's message.
func TestConsistencyLevels(t *testing.T) {
	for _, tc := range []struct {
		flag, level string
		weaker      []azcosmos.ConsistencyLevel
		stronger    []azcosmos.ConsistencyLevel
	}{
		{"strong", "Strong", []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelStrong, azcosmos.ConsistencyLevelSession, azcosmos.ConsistencyLevelEventual}, nil},
		{"bounded", "BoundedStaleness", []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelBoundedStaleness, azcosmos.ConsistencyLevelConsistentPrefix}, []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelStrong}},
		{"", "Session", []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelSession, azcosmos.ConsistencyLevelEventual}, []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelStrong, azcosmos.ConsistencyLevelBoundedStaleness}},
		{"eventual", "Eventual", []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelEventual}, []azcosmos.ConsistencyLevel{azcosmos.ConsistencyLevelSession, azcosmos.ConsistencyLevelConsistentPrefix}},
	} {
		t.Run(tc.level, func(t *testing.T) {
			s := startServer(t, server.Options{Consistency: tc.flag})
			acct := newRaw(t, s, auth.EmulatorKey).do(t, "GET", "/", nil, nil).JSON(t)
			policy, _ := acct["userConsistencyPolicy"].(map[string]any)
			if policy["defaultConsistencyLevel"] != tc.level {
				t.Fatalf("the account reports %v, want %s", policy, tc.level)
			}
			if tc.level == "BoundedStaleness" && (policy["maxStalenessPrefix"] != float64(100000) || policy["maxIntervalInSeconds"] != float64(300)) {
				t.Fatalf("bounded staleness bounds: %v", policy)
			}
			c := newClient(t, s, auth.EmulatorKey, nil)
			cc := setup(t, c, "db", "c", hashPK("/pk"), 400)
			pk := azcosmos.NewPartitionKeyString("a")
			for i, l := range tc.weaker {
				body := []byte(`{"id":"x","pk":"a","n":` + string(rune('0'+i)) + `}`)
				if _, err := cc.UpsertItem(ctx(), pk, body, &azcosmos.ItemOptions{ConsistencyLevel: l.ToPtr()}); err != nil {
					t.Fatalf("an upsert at %s: %v", l, err)
				}
				r, err := cc.ReadItem(ctx(), pk, "x", &azcosmos.ItemOptions{ConsistencyLevel: l.ToPtr()})
				if err != nil || !strings.Contains(string(r.Value), `"n":`+string(rune('0'+i))) {
					t.Fatalf("a read at %s: %v %s", l, err, r.Value)
				}
			}
			for _, l := range tc.stronger {
				_, err := cc.ReadItem(ctx(), pk, "x", &azcosmos.ItemOptions{ConsistencyLevel: l.ToPtr()})
				wantStatus(t, err, 400, "a read at "+string(l))
				if !strings.Contains(err.Error(), "ConsistencyLevel "+string(l)+" specified in the request is invalid when service is configured with consistency level "+tc.level) {
					t.Fatalf("a read at %s: %v", l, err)
				}
			}
			r := newRaw(t, s, auth.EmulatorKey).do(t, "GET", "/dbs/db/colls/c/docs/x", nil, map[string]string{"x-ms-consistency-level": "Linearizable", "x-ms-documentdb-partitionkey": `["a"]`})
			if r.Status != 400 || !strings.Contains(string(r.Body), "Linearizable") {
				t.Fatalf("an unknown level: %d %s", r.Status, r.Body)
			}
		})
	}
}

// TestConsistencyOptions checks the serve options' validation.
func TestConsistencyOptions(t *testing.T) {
	for _, o := range []server.Options{
		{Consistency: "linearizable"},
		{Consistency: "session", MaxStalenessPrefix: 100},
		{Consistency: "bounded", MaxStalenessPrefix: 5},
		{Consistency: "bounded", MaxStalenessInterval: time.Second},
		{Consistency: "bounded", MaxStalenessInterval: 5500 * time.Millisecond},
	} {
		o.InMemory = true
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--consistency") {
			t.Errorf("%+v: %v, want an error naming --consistency", o, err)
		}
	}
	o := server.Options{InMemory: true, Consistency: "Bounded", MaxStalenessPrefix: 10, MaxStalenessInterval: time.Hour}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}
