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
