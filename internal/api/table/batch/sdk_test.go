package batch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// handlerTransport runs the SDK's requests through an http.Handler in
// process, so the client's URL (and with it the SDK's Cosmos detection)
// can be anything.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) Do(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// batchServer parses each $batch request with Parse and answers with
// respond's parts written by WriteResponse.
type batchServer struct {
	t       *testing.T
	got     *Batch
	respond func(b *Batch) []Part
}

func (s *batchServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/$batch") || r.Method != http.MethodPost {
		s.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	b, err := Parse(r.Header.Get("Content-Type"), r.Body, Limits{})
	if err != nil {
		s.t.Errorf("Parse: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	s.got = b
	boundary, err := NewBoundary(rand.Reader)
	if err != nil {
		s.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteResponse(&buf, boundary, s.respond(b)); err != nil {
		s.t.Errorf("WriteResponse: %v", err)
	}
	w.Header().Set("Content-Type", ContentType(boundary))
	w.WriteHeader(http.StatusAccepted)
	w.Write(buf.Bytes())
}

func newGoClient(t *testing.T, tableURL string, h http.Handler) *aztables.Client {
	t.Helper()
	c, err := aztables.NewClientWithNoCredential(tableURL, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: handlerTransport{h},
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func entity(t *testing.T, pk, rk string, props map[string]any) []byte {
	t.Helper()
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range props {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func goActions(t *testing.T) []aztables.TransactionAction {
	etag := azcore.ETag(`W/"datetime'2024-01-01T00%3A00%3A00Z'"`)
	return []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity(t, "p1", "r1", map[string]any{"n": 1})},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entity(t, "p1", "r2", map[string]any{"s": "x'y"}), IfMatch: &etag},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: entity(t, "p1", "r3", nil)},
		{ActionType: aztables.TransactionTypeDelete, Entity: entity(t, "p1", "r4", nil)},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: entity(t, "p1", "r5", map[string]any{"b": true})},
	}
}

// successParts answers every operation as the service does when it
// succeeds: 204 with an ETag (the Go SDK sends return-no-content for
// inserts).
func successParts(b *Batch) []Part {
	parts := make([]Part, len(b.Operations))
	for i, op := range b.Operations {
		h := http.Header{}
		h.Set("ETag", `W/"datetime'2026-11-28T19%3A00%3A00.0000000Z'"`)
		h.Set("DataServiceVersion", "3.0;")
		if op.Method == http.MethodPost && op.Header.Get("X-HTTP-Method") == "" {
			h.Set("Preference-Applied", "return-no-content")
			h.Set("Location", op.RawURL+"(PartitionKey='p1',RowKey='r')")
			h.Set("DataServiceId", op.RawURL+"(PartitionKey='p1',RowKey='r')")
		}
		parts[i] = Part{Status: http.StatusNoContent, ContentID: op.ContentID, Header: h}
	}
	return parts
}

// TestParseGoSDK builds real transactions with aztables v1.4.1 against both
// a Storage-style and a Cosmos-style endpoint and checks what Parse reads.
// aztables treats a URL holding "localhost" and "8902" as Cosmos and then
// sends merges as POST + X-HTTP-Method: MERGE (service_client.go,
// cosmos_patch_transform_policy.go).
func TestParseGoSDK(t *testing.T) {
	for _, tc := range []struct {
		name, tableURL, mergeMethod, wantHost, wantPathPrefix string
	}{
		{"storage", "http://127.0.0.1:10002/devstoreaccount1/mytable", "PATCH", "127.0.0.1:10002", "/devstoreaccount1/"},
		{"cosmos", "http://localhost:8902/mytable", "POST", "localhost:8902", "/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &batchServer{t: t, respond: successParts}
			c := newGoClient(t, tc.tableURL, srv)
			if _, err := c.SubmitTransaction(context.Background(), goActions(t), nil); err != nil {
				t.Fatalf("SubmitTransaction: %v", err)
			}
			b := srv.got
			if b == nil || len(b.Operations) != 5 {
				t.Fatalf("got %+v, want 5 operations", b)
			}
			if !strings.HasPrefix(b.Boundary, "batch_") || !strings.HasPrefix(b.ChangesetBoundary, "changeset_") {
				t.Errorf("boundaries %q %q", b.Boundary, b.ChangesetBoundary)
			}
			wantMethods := []string{"POST", tc.mergeMethod, "PUT", "DELETE", tc.mergeMethod}
			wantEffective := []string{"POST", "MERGE", "PUT", "DELETE", "MERGE"}
			if tc.mergeMethod == "PATCH" {
				wantEffective = []string{"POST", "PATCH", "PUT", "DELETE", "PATCH"}
			}
			for i, op := range b.Operations {
				if op.Index != i {
					t.Errorf("op %d: Index %d", i, op.Index)
				}
				if op.Method != wantMethods[i] || op.EffectiveMethod() != wantEffective[i] {
					t.Errorf("op %d: method %s (effective %s), want %s (%s)", i, op.Method, op.EffectiveMethod(), wantMethods[i], wantEffective[i])
				}
				if op.URL.Host != tc.wantHost || !strings.HasPrefix(op.URL.Path, tc.wantPathPrefix+"mytable") {
					t.Errorf("op %d: URL %q", i, op.RawURL)
				}
				rk := "r" + string(rune('1'+i))
				if i > 0 && !strings.Contains(op.URL.Path, "RowKey='"+rk+"'") {
					t.Errorf("op %d: URL %q does not name RowKey %s", i, op.RawURL, rk)
				}
				if op.Method == "DELETE" {
					if len(op.Body) != 0 {
						t.Errorf("delete has body %q", op.Body)
					}
					continue
				}
				var e map[string]any
				if err := json.Unmarshal(op.Body, &e); err != nil {
					t.Fatalf("op %d body %q: %v", i, op.Body, err)
				}
				if e["RowKey"] != rk || e["PartitionKey"] != "p1" {
					t.Errorf("op %d: body %s", i, op.Body)
				}
			}
			if got := b.Operations[0].Header.Get("Prefer"); got != "return-no-content" {
				t.Errorf("insert Prefer = %q", got)
			}
			if got := b.Operations[1].Header.Get("If-Match"); got != `W/"datetime'2024-01-01T00%3A00%3A00Z'"` {
				t.Errorf("merge If-Match = %q", got)
			}
			if got := b.Operations[3].Header.Get("If-Match"); got != "*" {
				t.Errorf("delete If-Match = %q", got)
			}
			if got := b.Operations[2].Header.Get("If-Match"); got != "" {
				t.Errorf("insert-or-replace If-Match = %q", got)
			}
		})
	}
}

// TestRoundTripGoSDKFailure answers a transaction the way the service
// answers one whose second operation fails, and checks that aztables
// reports it as an error carrying the whole response.
// aztables (transactional_batch.go buildTransactionResponse) fails on any
// inner status >= 400 with runtime.NewResponseError of the outer response.
func TestRoundTripGoSDKFailure(t *testing.T) {
	srv := &batchServer{t: t, respond: func(b *Batch) []Part {
		return []Part{FailurePart(Failure{Index: 1, Status: http.StatusConflict, Code: "EntityAlreadyExists",
			Message: "The specified entity already exists.", ContentID: b.Operations[1].ContentID})}
	}}
	c := newGoClient(t, "http://127.0.0.1:10002/devstoreaccount1/mytable", srv)
	_, err := c.SubmitTransaction(context.Background(), goActions(t), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("SubmitTransaction error = %v, want *azcore.ResponseError", err)
	}
	if re.StatusCode != http.StatusAccepted {
		t.Errorf("status %d, want 202", re.StatusCode)
	}
	body, _ := io.ReadAll(re.RawResponse.Body)
	if !bytes.Contains(body, []byte(`"1:The specified entity already exists."`)) || !bytes.Contains(body, []byte("HTTP/1.1 409 Conflict")) {
		t.Errorf("response body lacks the failure:\n%s", body)
	}
}

// TestRoundTripGoSDKSuccess: a success response written by WriteResponse
// is accepted by aztables, and each part reads back as an HTTP response.
func TestRoundTripGoSDKSuccess(t *testing.T) {
	var written []byte
	srv := &batchServer{t: t, respond: func(b *Batch) []Part {
		parts := successParts(b)
		var buf bytes.Buffer
		if err := WriteResponse(&buf, "batchresponse_x", parts); err != nil {
			t.Error(err)
		}
		written = buf.Bytes()
		return parts
	}}
	c := newGoClient(t, "http://localhost:8902/mytable", srv)
	if _, err := c.SubmitTransaction(context.Background(), goActions(t), nil); err != nil {
		t.Fatalf("SubmitTransaction: %v", err)
	}
	got := readResponse(t, "batchresponse_x", written)
	if len(got) != 5 {
		t.Fatalf("read %d parts back, want 5", len(got))
	}
	for i, r := range got {
		if r.StatusCode != http.StatusNoContent || r.Header.Get("ETag") == "" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("part %d: %d %v", i, r.StatusCode, r.Header)
		}
	}
	if got[0].Header.Get("Preference-Applied") != "return-no-content" || !strings.Contains(got[0].Header.Get("Location"), "RowKey=") {
		t.Errorf("insert part headers %v", got[0].Header)
	}
}
