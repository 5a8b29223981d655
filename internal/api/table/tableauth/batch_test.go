package tableauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/api/table/batch"
)

var entityPath = regexp.MustCompile(`/([A-Za-z0-9]+)(?:\(PartitionKey='([^']*)',RowKey='([^']*)'\))?$`)

// TestTransactionUnderTableSAS shows how the two packages meet: the outer
// $batch request of an aztables transaction is verified once, and each
// operation is then checked against the grant. A table SAS with "ra"
// permits the insert and refuses the delete, which the server reports as
// the changeset's failure at index 1.
func TestTransactionUnderTableSAS(t *testing.T) {
	keys := testKeys(t)
	var refused error
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g, err := clockAt(t0).Verify(r, accountOf(r, "devstoreaccount1"), keys)
		if err != nil {
			t.Errorf("Verify: %v", err)
			w.WriteHeader(http.StatusForbidden)
			return
		}
		b, err := batch.Parse(r.Header.Get("Content-Type"), r.Body, batch.Limits{})
		if err != nil {
			t.Errorf("Parse: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var parts []batch.Part
		for _, op := range b.Operations {
			m := entityPath.FindStringSubmatch(op.URL.Path)
			if m == nil {
				t.Fatalf("path %q", op.URL.Path)
			}
			table, pk, rk := m[1], m[2], m[3]
			if pk == "" {
				var e struct{ PartitionKey, RowKey string }
				json.Unmarshal(op.Body, &e)
				pk, rk = e.PartitionKey, e.RowKey
			}
			if err := g.AllowEntity(EntityAction(op.Method, op.Header), table, pk, rk); err != nil {
				refused = err
				var ae *Error
				errors.As(err, &ae)
				parts = []batch.Part{batch.FailurePart(batch.Failure{Index: op.Index, Status: ae.Status, Code: ae.Code, Message: ae.Message()})}
				break
			}
			parts = append(parts, batch.Part{Status: http.StatusNoContent, Header: http.Header{"ETag": {`W/"x"`}}})
		}
		var buf bytes.Buffer
		if err := batch.WriteResponse(&buf, "batchresponse_1", parts); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", batch.ContentType("batchresponse_1"))
		w.WriteHeader(http.StatusAccepted)
		w.Write(buf.Bytes())
	}))
	defer srv.Close()

	// aztables v1.4.1 GetTableSASURL joins the service URL and the table
	// without a slash ("…/devstoreaccount1mytable?…"), so take only its query.
	q := tableSAS(t, aztables.SASPermissions{Read: true, Add: true})
	c, err := aztables.NewClientWithNoCredential(srv.URL+"/devstoreaccount1/mytable?"+q, &aztables.ClientOptions{ClientOptions: noRetry()})
	if err != nil {
		t.Fatal(err)
	}
	add := func(rk string) aztables.TransactionAction {
		e, _ := json.Marshal(map[string]string{"PartitionKey": "p", "RowKey": rk})
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: e}
	}
	del := add("r2")
	del.ActionType = aztables.TransactionTypeDelete
	if _, err := c.SubmitTransaction(context.Background(), []aztables.TransactionAction{add("r1"), add("r3")}, nil); err != nil {
		t.Fatalf("inserts under an \"ra\" SAS: %v", err)
	}
	_, err = c.SubmitTransaction(context.Background(), []aztables.TransactionAction{add("r1"), del}, nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("insert and delete: %v", err)
	}
	if !errors.Is(refused, ErrPermission) {
		t.Errorf("refusal %v", refused)
	}
	body := new(bytes.Buffer)
	body.ReadFrom(re.RawResponse.Body)
	if !strings.Contains(body.String(), `"1:This request is not authorized to perform this operation using this permission."`) {
		t.Errorf("response %s", body)
	}
}
