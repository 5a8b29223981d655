package tables

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/server"
)

// TestTableSAS uses a table SAS made by aztables (Client.GetTableSASURL)
// with read and add permissions and a PartitionKey range: reads and
// inserts inside the range pass, entities outside it are refused or left
// out of queries, and a delete (not granted) and an expired signature
// are refused, all with 403 and the service's codes.
func TestTableSAS(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	svc := service(t, s, pathStyle, emulatorKey)
	tc := newTable(t, svc, "sastable")
	for _, pk := range []string{"a", "b", "c", "d"} {
		if _, err := tc.AddEntity(ctx, ent(pk, "x", nil), nil); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	sasURL := func(perms aztables.SASPermissions, expiry time.Time) string {
		u, err := tc.GetTableSASURL(perms, now.Add(-time.Minute), expiry)
		if err != nil {
			t.Fatal(err)
		}
		// GetTableSASURL appends the table to an endpoint with a path
		// without a '/' (".../devstoreaccount1sastable?...", aztables
		// v1.4.1 client.go GetTableSASURL): keep its signature, and put
		// it on the table's URL.
		//
		// It also signs the key range without putting it in the query
		// (sas_service.go Sign leaves spk/srk/epk/erk out of
		// SASQueryParameters), so a range SAS from it fails on any
		// service: add the range it signed.
		_, query, _ := strings.Cut(u, "?")
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"spk": perms.StartPartitionKey, "srk": perms.StartRowKey, "epk": perms.EndPartitionKey, "erk": perms.EndRowKey} {
			if v != "" {
				q.Set(k, v)
			}
		}
		ep, _ := endpoint(s, pathStyle)
		return ep + "/sastable?" + q.Encode()
	}
	u := sasURL(aztables.SASPermissions{Read: true, Add: true, StartPartitionKey: "b", EndPartitionKey: "c"}, now.Add(time.Hour))
	sc, err := aztables.NewClientWithNoCredential(u, clientOptions(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.GetEntity(ctx, "b", "x", nil); err != nil {
		t.Errorf("read inside the range: %v", err)
	}
	if _, err := sc.GetEntity(ctx, "a", "x", nil); status(err) != http.StatusForbidden || code(err) != "AuthorizationFailure" {
		t.Errorf("read outside the range: %v", err)
	}
	var pks []string
	for _, e := range listAll(t, sc, nil) {
		var m map[string]any
		_ = json.Unmarshal(e, &m)
		pks = append(pks, m["PartitionKey"].(string))
	}
	if len(pks) != 2 || pks[0] == "a" || pks[1] == "d" {
		t.Errorf("a query under the range returned PartitionKeys %v, want b and c", pks)
	}
	if _, err := sc.AddEntity(ctx, ent("c", "new", nil), nil); err != nil {
		t.Errorf("insert inside the range: %v", err)
	}
	if _, err := sc.AddEntity(ctx, ent("z", "new", nil), nil); status(err) != http.StatusForbidden {
		t.Errorf("insert outside the range: %v", err)
	}
	if _, err := sc.DeleteEntity(ctx, "b", "x", nil); status(err) != http.StatusForbidden || code(err) != "AuthorizationPermissionMismatch" {
		t.Errorf("delete without the d permission: %v", err)
	}
	// Another table is out of reach.
	if _, err := svc.CreateTable(ctx, "othertable", nil); err != nil {
		t.Fatal(err)
	}
	_, query, _ := strings.Cut(u, "?")
	ep, _ := endpoint(s, pathStyle)
	oc, err := aztables.NewClientWithNoCredential(ep+"/othertable?"+query, clientOptions(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oc.AddEntity(ctx, ent("b", "y", nil), nil); status(err) != http.StatusForbidden {
		t.Errorf("a write to another table: %v", err)
	}
	// Expired.
	old := sasURL(aztables.SASPermissions{Read: true}, now.Add(-time.Second))
	ec, err := aztables.NewClientWithNoCredential(old, clientOptions(s, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ec.GetEntity(ctx, "b", "x", nil); status(err) != http.StatusForbidden || code(err) != "AuthenticationFailed" {
		t.Errorf("expired SAS: %v", err)
	}
}

// TestAccountSASOverTLS serves the Table API with --tls and uses an
// account SAS from aztables (ServiceClient.GetAccountSASURL, which always
// signs spr=https) through it.
func TestAccountSASOverTLS(t *testing.T) {
	s := startServer(t, server.Options{TLS: true})
	ctx := context.Background()
	addr := s.TableAddr()
	opts := func() *aztables.ClientOptions {
		tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the server's self-signed certificate
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			}}
		o := &aztables.ClientOptions{}
		o.Transport = &http.Client{Transport: tr}
		o.Retry.MaxRetries = -1
		return o
	}
	cred, err := aztables.NewSharedKeyCredential("devstoreaccount1", emulatorKey)
	if err != nil {
		t.Fatal(err)
	}
	base := "https://" + addr + "/devstoreaccount1"
	svc, err := aztables.NewServiceClientWithSharedKey(base, cred, opts())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "tlstable", nil); err != nil {
		t.Fatalf("create over TLS: %v", err)
	}
	u, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true, Add: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sas, err := aztables.NewServiceClientWithNoCredential(u, opts())
	if err != nil {
		t.Fatal(err)
	}
	tc := sas.NewClient("tlstable")
	if _, err := tc.AddEntity(ctx, ent("p", "r", nil), nil); err != nil {
		t.Errorf("insert with an account SAS: %v", err)
	}
	if _, err := tc.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Errorf("read with an account SAS: %v", err)
	}
	if _, err := sas.DeleteTable(ctx, "tlstable", nil); status(err) != http.StatusForbidden {
		t.Errorf("delete table without the d permission: %v", err)
	}
}
