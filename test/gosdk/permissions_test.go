package gosdk

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// resourceTokenPolicy replaces the Authorization header that the Go SDK's
// key credential computed with a resource token. The Go SDK has no
// resource-token credential; this per-retry policy runs after its own
// authorization policy, so every request carries the token instead.
type resourceTokenPolicy struct{ token string }

func (p resourceTokenPolicy) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set("Authorization", url.QueryEscape(p.token))
	return req.Next()
}

// TestResourceTokenThroughGoSDK creates a user and a partition-key
// permission over the REST API (the Go SDK has no users API), then uses
// the permission's token with the Go SDK: it reads and writes its key and
// is refused everything else.
func TestResourceTokenThroughGoSDK(t *testing.T) {
	s := startServer(t, server.Options{})
	admin := newClient(t, s, auth.EmulatorKey, nil)
	setup(t, admin, "gperm", "orders", hashPK("/customer"), 400)
	adminDB, _ := admin.NewDatabase("gperm")
	_, err := adminDB.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: "other", PartitionKeyDefinition: hashPK("/customer")}, nil)
	must(t, err, "create container")
	raw := newRaw(t, s, auth.EmulatorKey)
	if r := raw.do(t, "POST", "/dbs/gperm/users", []byte(`{"id":"alice"}`), nil); r.Status != http.StatusCreated {
		t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	r := raw.do(t, "POST", "/dbs/gperm/users/alice/permissions",
		[]byte(`{"id":"p","permissionMode":"All","resource":"dbs/gperm/colls/orders","resourcePartitionKey":["alice"]}`), nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("create permission: %d %s", r.Status, r.Body)
	}
	token := r.JSON(t)["_token"].(string)

	// Any key makes a valid credential; the policy replaces its signature.
	c := newClient(t, s, readOnlyKey, &azcosmos.ClientOptions{ClientOptions: policyOptions(resourceTokenPolicy{token})})
	orders, err := c.NewContainer("gperm", "orders")
	must(t, err, "container client")
	alice := azcosmos.NewPartitionKeyString("alice")
	_, err = orders.CreateItem(ctx(), alice, []byte(`{"id":"1","customer":"alice","n":1}`), nil)
	must(t, err, "create an item of the granted key")
	got, err := orders.ReadItem(ctx(), alice, "1", nil)
	must(t, err, "read an item of the granted key")
	if !strings.Contains(string(got.Value), `"n":1`) {
		t.Fatalf("read %s", got.Value)
	}
	pager := orders.NewQueryItemsPager("SELECT VALUE c.id FROM c", alice, nil)
	page, err := pager.NextPage(ctx())
	must(t, err, "query the granted key")
	if len(page.Items) != 1 || string(page.Items[0]) != `"1"` {
		t.Fatalf("query rows %q", page.Items)
	}
	_, err = orders.CreateItem(ctx(), azcosmos.NewPartitionKeyString("bob"), []byte(`{"id":"2","customer":"bob"}`), nil)
	wantStatus(t, err, http.StatusForbidden, "create an item of another key")
	other, _ := c.NewContainer("gperm", "other")
	_, err = other.ReadItem(ctx(), alice, "1", nil)
	wantStatus(t, err, http.StatusForbidden, "read another container")
	db, _ := c.NewDatabase("gperm")
	_, err = db.Read(ctx(), nil)
	wantStatus(t, err, http.StatusForbidden, "read the database")
	_, err = orders.ReadThroughput(ctx(), nil)
	wantStatus(t, err, http.StatusForbidden, "read the container's offer")

	// Deleting the permission revokes the token at once.
	if r := raw.do(t, "DELETE", "/dbs/gperm/users/alice/permissions/p", nil, nil); r.Status != http.StatusNoContent {
		t.Fatalf("delete permission: %d %s", r.Status, r.Body)
	}
	_, err = orders.ReadItem(ctx(), alice, "1", nil)
	wantStatus(t, err, http.StatusUnauthorized, "read with a deleted permission's token")
}

func policyOptions(p policy.Policy) azcore.ClientOptions {
	return azcore.ClientOptions{PerRetryPolicies: []policy.Policy{p}}
}

// TestItemResourceTokenStaysInItsPartition uses the token of an item
// permission narrowed to partition key "alice" through the Go SDK: it reads,
// replaces and deletes that item, and is refused the item of the same id in
// partition "bob" (ids are unique only within a logical partition).
func TestItemResourceTokenStaysInItsPartition(t *testing.T) {
	s := startServer(t, server.Options{})
	admin := newClient(t, s, auth.EmulatorKey, nil)
	setup(t, admin, "iperm", "profiles", hashPK("/user"), 400)
	profiles, err := admin.NewContainer("iperm", "profiles")
	must(t, err, "container client")
	alice, bob := azcosmos.NewPartitionKeyString("alice"), azcosmos.NewPartitionKeyString("bob")
	for _, u := range []string{"alice", "bob"} {
		_, err := profiles.CreateItem(ctx(), azcosmos.NewPartitionKeyString(u), []byte(`{"id":"profile","user":"`+u+`"}`), nil)
		must(t, err, "create "+u+"'s profile")
	}
	raw := newRaw(t, s, auth.EmulatorKey)
	if r := raw.do(t, "POST", "/dbs/iperm/users", []byte(`{"id":"alice"}`), nil); r.Status != http.StatusCreated {
		t.Fatalf("create user: %d %s", r.Status, r.Body)
	}
	r := raw.do(t, "POST", "/dbs/iperm/users/alice/permissions",
		[]byte(`{"id":"p","permissionMode":"All","resource":"dbs/iperm/colls/profiles/docs/profile","resourcePartitionKey":["alice"]}`), nil)
	if r.Status != http.StatusCreated {
		t.Fatalf("create permission: %d %s", r.Status, r.Body)
	}
	perm := r.JSON(t)
	if pk, _ := perm["resourcePartitionKey"].([]any); len(pk) != 1 || pk[0] != "alice" {
		t.Fatalf("the permission's resourcePartitionKey is %v; want [alice]", perm["resourcePartitionKey"])
	}

	c := newClient(t, s, readOnlyKey, &azcosmos.ClientOptions{ClientOptions: policyOptions(resourceTokenPolicy{perm["_token"].(string)})})
	mine, err := c.NewContainer("iperm", "profiles")
	must(t, err, "container client")
	_, err = mine.ReadItem(ctx(), bob, "profile", nil)
	wantStatus(t, err, http.StatusForbidden, "read the same id in another partition")
	_, err = mine.ReplaceItem(ctx(), bob, "profile", []byte(`{"id":"profile","user":"bob","owned":true}`), nil)
	wantStatus(t, err, http.StatusForbidden, "replace the same id in another partition")
	_, err = mine.DeleteItem(ctx(), bob, "profile", nil)
	wantStatus(t, err, http.StatusForbidden, "delete the same id in another partition")
	got, err := profiles.ReadItem(ctx(), bob, "profile", nil)
	must(t, err, "read bob's profile with the primary key")
	if strings.Contains(string(got.Value), "owned") {
		t.Fatalf("bob's profile was replaced: %s", got.Value)
	}

	got, err = mine.ReadItem(ctx(), alice, "profile", nil)
	must(t, err, "read the granted item")
	if !strings.Contains(string(got.Value), `"user":"alice"`) {
		t.Fatalf("read %s", got.Value)
	}
	_, err = mine.ReplaceItem(ctx(), alice, "profile", []byte(`{"id":"profile","user":"alice","n":2}`), nil)
	must(t, err, "replace the granted item")
	_, err = mine.DeleteItem(ctx(), alice, "profile", nil)
	must(t, err, "delete the granted item")
}
