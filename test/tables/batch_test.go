package tables

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/server"
)

func ent(pk, rk string, props map[string]any) []byte {
	m := map[string]any{"PartitionKey": pk, "RowKey": rk}
	for k, v := range props {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return b
}

// TestBatch submits transactions through the SDK: every action type in
// one changeset, then a changeset whose third operation fails, which
// must leave nothing written and name index 2 in its error.
func TestBatch(t *testing.T) {
	s := startServer(t, server.Options{})
	ctx := context.Background()
	for _, st := range styles {
		t.Run(st.String(), func(t *testing.T) {
			svc := service(t, s, st, emulatorKey)
			tc := newTable(t, svc, "batch"+st.String())
			if _, err := tc.AddEntity(ctx, ent("p", "old", map[string]any{"A": "1", "B": "2"}), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.AddEntity(ctx, ent("p", "gone", nil), nil); err != nil {
				t.Fatal(err)
			}
			old, err := tc.GetEntity(ctx, "p", "old", nil)
			if err != nil {
				t.Fatal(err)
			}
			actions := []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "new1", map[string]any{"X": 1})},
				{ActionType: aztables.TransactionTypeUpdateMerge, Entity: ent("p", "old", map[string]any{"C": "3"}), IfMatch: &old.ETag},
				{ActionType: aztables.TransactionTypeInsertReplace, Entity: ent("p", "new2", map[string]any{"Y": 2})},
				{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("p", "new3", map[string]any{"Z": 3})},
				{ActionType: aztables.TransactionTypeDelete, Entity: ent("p", "gone", nil)},
			}
			resp, err := tc.SubmitTransaction(ctx, actions, nil)
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			_ = resp
			if p := getProps(t, tc, "p", "old"); p["A"] != "1" || p["C"] != "3" {
				t.Errorf("the merge in the batch gave %v", p)
			}
			for _, rk := range []string{"new1", "new2", "new3"} {
				getProps(t, tc, "p", rk)
			}
			if _, err := tc.GetEntity(ctx, "p", "gone", nil); code(err) != "ResourceNotFound" {
				t.Errorf("the batch's delete left the entity: %v", err)
			}

			// A failing changeset: the third operation adds an entity
			// that exists. Nothing of it may be written.
			failing := []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "f1", nil)},
				{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("p", "new2", map[string]any{"W": 1})},
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "new1", nil)},
			}
			_, err = tc.SubmitTransaction(ctx, failing, nil)
			if st, c, i := batchFailure(t, err); st != http.StatusConflict || c != "EntityAlreadyExists" || i != 2 {
				t.Fatalf("failing batch: %d %s at %d, want 409 EntityAlreadyExists at 2", st, c, i)
			}
			if _, err := tc.GetEntity(ctx, "p", "f1", nil); code(err) != "ResourceNotFound" {
				t.Errorf("the failed batch wrote its first operation: %v", err)
			}
			if p := getProps(t, tc, "p", "new2"); p["W"] != nil || p["Y"] != 2.0 {
				t.Errorf("the failed batch replaced new2: %v", p)
			}
			// A stale ETag fails its operation with 412.
			stale := []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeUpdateReplace, Entity: ent("p", "old", nil), IfMatch: &old.ETag},
			}
			_, err = tc.SubmitTransaction(ctx, stale, nil)
			if st, c, i := batchFailure(t, err); st != http.StatusPreconditionFailed || c != "UpdateConditionNotSatisfied" || i != 0 {
				t.Errorf("stale ETag in a batch: %d %s at %d", st, c, i)
			}
			// Two partition keys, and one entity twice, are refused.
			mixed := []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "m1", nil)},
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("q", "m2", nil)},
			}
			_, err = tc.SubmitTransaction(ctx, mixed, nil)
			if st, _, i := batchFailure(t, err); st != http.StatusBadRequest || i != 1 {
				t.Errorf("two partition keys: %d at %d", st, i)
			}
			twice := []aztables.TransactionAction{
				{ActionType: aztables.TransactionTypeAdd, Entity: ent("p", "t1", nil)},
				{ActionType: aztables.TransactionTypeInsertMerge, Entity: ent("p", "t1", nil)},
			}
			_, err = tc.SubmitTransaction(ctx, twice, nil)
			if st, c, i := batchFailure(t, err); st != http.StatusBadRequest || c != "InvalidDuplicateRow" || i != 1 {
				t.Errorf("one entity twice: %d %s at %d", st, c, i)
			}
			// 100 operations are one batch; 101 are refused.
			var big []aztables.TransactionAction
			for i := range 101 {
				big = append(big, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: ent("big", fmt.Sprintf("r%03d", i), nil)})
			}
			_, err = tc.SubmitTransaction(ctx, big, nil)
			if st, _, _ := batchFailure(t, err); st != http.StatusBadRequest {
				t.Errorf("101 operations: %d, want 400", st)
			}
			if _, err := tc.SubmitTransaction(ctx, big[:100], nil); err != nil {
				t.Errorf("100 operations: %v", err)
			}
			if n := len(listAll(t, tc, &aztables.ListEntitiesOptions{Filter: ptr("PartitionKey eq 'big'")})); n != 100 {
				t.Errorf("the batch of 100 wrote %d entities", n)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

var (
	partStatus = regexp.MustCompile(`HTTP/1.1 (\d+) `)
	partCode   = regexp.MustCompile(`"code":"(\w+)"`)
	partIndex  = regexp.MustCompile(`"value":"(\d+):`)
)

// batchFailure reads the failed changeset from the SDK's error: aztables
// reports a failed transaction as a ResponseError of the outer 202
// response, whose text holds the body (transactional_batch.go
// buildTransactionResponse); the one part holds the failing status and
// an odata.error whose message starts with the failing index.
func batchFailure(t *testing.T, err error) (status int, code string, index int) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted {
		t.Fatalf("the transaction did not fail as a 202 batch response: %v", err)
	}
	text := err.Error()
	if m := partStatus.FindStringSubmatch(text); m != nil {
		status, _ = strconv.Atoi(m[1])
	}
	if m := partCode.FindStringSubmatch(text); m != nil {
		code = m[1]
	}
	index = -1
	if m := partIndex.FindStringSubmatch(text); m != nil {
		index, _ = strconv.Atoi(m[1])
	}
	if strings.Count(text, "HTTP/1.1 ") != 1 {
		t.Errorf("a failed changeset must hold exactly one response part: %s", text)
	}
	return status, code, index
}
