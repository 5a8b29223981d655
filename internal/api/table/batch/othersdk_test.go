package batch

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkServer answers transactions as the service does: every operation
// succeeds on table "okay"; on table "failone" the second fails with 409
// EntityAlreadyExists.
func sdkServer(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := Parse(r.Header.Get("Content-Type"), r.Body, Limits{})
		if err != nil {
			t.Errorf("Parse: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var parts []Part
		if strings.Contains(b.Operations[0].URL.Path, "failone") {
			parts = []Part{FailurePart(Failure{Index: 1, Status: http.StatusConflict, Code: "EntityAlreadyExists",
				Message: "The specified entity already exists.\nRequestId:x\nTime:2026-11-28T19:00:00.0000000Z", ContentID: b.Operations[1].ContentID})}
		} else {
			for _, op := range b.Operations {
				h := http.Header{}
				h.Set("ETag", `W/"datetime'2026-11-28T19%3A00%3A00.0000000Z'"`)
				h.Set("DataServiceVersion", "3.0;")
				if op.Method == http.MethodPost {
					var e struct{ PartitionKey, RowKey string }
					json.Unmarshal(op.Body, &e)
					loc := op.RawURL + "(PartitionKey='" + e.PartitionKey + "',RowKey='" + e.RowKey + "')"
					h.Set("Location", loc)
					h.Set("DataServiceId", loc)
					h.Set("Preference-Applied", "return-no-content")
				}
				parts = append(parts, Part{Status: http.StatusNoContent, ContentID: op.ContentID, Header: h})
			}
		}
		boundary, _ := NewBoundary(rand.Reader)
		var buf bytes.Buffer
		if err := WriteResponse(&buf, boundary, parts); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", ContentType(boundary))
		w.WriteHeader(http.StatusAccepted)
		w.Write(buf.Bytes())
	}))
}

type sdkResult struct {
	Status       int `json:"status"`
	SubResponses []struct {
		Status int    `json:"status"`
		RowKey string `json:"rowKey"`
		ETag   string `json:"etag"`
	} `json:"subResponses"`
	Results []struct {
		ETag string `json:"etag"`
	} `json:"results"`
	Error *struct {
		StatusCode int    `json:"statusCode"`
		Code       string `json:"code"`
		Message    string `json:"message"`
		Index      *int   `json:"index"`
	} `json:"error"`
}

// TestRoundTripOtherSDKs runs the JavaScript SDK (@azure/data-tables
// 13.3.2) and the Python SDK (azure-data-tables 12.4.2) against responses
// that WriteResponse wrote, when they are installed: set
// PARSEC_TABLE_JS_MODULES to a directory whose node_modules holds the
// former, PARSEC_TABLE_PYTHONPATH to a PYTHONPATH that imports the latter.
// What each SDK does with the response is in its sources:
// TableTransaction.js parseTransactionResponse (splits on
// "--changesetresponse_", reads status, ETag and RowKey='..', throws the
// odata.error of a sub-response), and _base_client.py _batch_send with
// _error.py TableTransactionError (index = the number before the first ':').
func TestRoundTripOtherSDKs(t *testing.T) {
	jsDir, pyPath := os.Getenv("PARSEC_TABLE_JS_MODULES"), os.Getenv("PARSEC_TABLE_PYTHONPATH")
	if jsDir == "" && pyPath == "" {
		t.Skip("set PARSEC_TABLE_JS_MODULES and/or PARSEC_TABLE_PYTHONPATH to run the JavaScript and Python SDKs")
	}
	srv := sdkServer(t)
	defer srv.Close()
	endpoint := srv.URL + "/devstoreaccount1"
	script, _ := filepath.Abs("testdata")
	run := func(t *testing.T, table string, cmd *exec.Cmd) sdkResult {
		t.Helper()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		var r sdkResult
		if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		return r
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if jsDir != "" {
		t.Run("js", func(t *testing.T) {
			node := func(table string) *exec.Cmd {
				c := exec.CommandContext(ctx, "node", filepath.Join(script, "roundtrip.js"), endpoint, table)
				c.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(jsDir, "node_modules"))
				return c
			}
			ok := run(t, "okay", node("okay"))
			if ok.Error != nil || ok.Status != 202 || len(ok.SubResponses) != 3 {
				t.Fatalf("success: %+v", ok)
			}
			for i, s := range ok.SubResponses {
				if s.Status != 204 || s.ETag == "" {
					t.Errorf("sub-response %d: %+v", i, s)
				}
			}
			if ok.SubResponses[0].RowKey != "r1" || ok.SubResponses[1].RowKey != "r2" {
				t.Errorf("row keys from Location: %+v", ok.SubResponses)
			}
			bad := run(t, "failone", node("failone"))
			if bad.Error == nil || bad.Error.StatusCode != 409 || bad.Error.Code != "EntityAlreadyExists" || !strings.HasPrefix(bad.Error.Message, "1:The specified entity already exists.") {
				t.Fatalf("failure: %+v", bad.Error)
			}
		})
	}
	if pyPath != "" {
		t.Run("python", func(t *testing.T) {
			py := func(table string) *exec.Cmd {
				c := exec.CommandContext(ctx, "python3", filepath.Join(script, "roundtrip.py"), endpoint, table)
				c.Env = append(os.Environ(), "PYTHONPATH="+pyPath)
				return c
			}
			ok := run(t, "okay", py("okay"))
			if ok.Error != nil || len(ok.Results) != 3 || ok.Results[0].ETag == "" {
				t.Fatalf("success: %+v", ok)
			}
			bad := run(t, "failone", py("failone"))
			if bad.Error == nil || bad.Error.StatusCode != 409 || bad.Error.Code != "EntityAlreadyExists" || bad.Error.Index == nil || *bad.Error.Index != 1 {
				t.Fatalf("failure: %+v", bad.Error)
			}
		})
	}
}
