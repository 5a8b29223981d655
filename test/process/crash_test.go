// Package process tests the real parsec binary as a process: it is killed
// with SIGKILL under concurrent write load, restarted on the same data
// directory, and every write it acknowledged must be there, intact.
package process

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/testbin"
)

var parsecBin string

func TestMain(m *testing.M) { testbin.Main(m, &parsecBin) }

// start starts parsec serve on dataDir (see run) and fails the test if it
// does not come up.
func start(t *testing.T, dataDir string) *server {
	t.Helper()
	s, out, err := run(t, dataDir, "--partition-max-rus", "1000")
	if err != nil {
		t.Fatalf("the server exited before serving: %v\n%s", err, out)
	}
	return s
}

var key, _ = auth.DecodeKey(auth.EmulatorKey)

var client = &http.Client{Timeout: 10 * time.Second}

func call(base, method, path, pk string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	auth.SignRequest(req, key, time.Now())
	if pk != "" {
		req.Header.Set("x-ms-documentdb-partitionkey", pk)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func TestSIGKILLLosesNoAcknowledgedWrite(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir)
	if st, b, err := call(p.url, "POST", "/dbs", "", []byte(`{"id":"db"}`)); err != nil || st != 201 {
		t.Fatalf("create database: %d %s %v", st, b, err)
	}
	// 4,000 RU/s at 1,000 per partition: 4 physical partitions.
	req, _ := http.NewRequest("POST", p.url+"/dbs/db/colls", bytes.NewReader([]byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`)))
	date := time.Now().UTC().Format(http.TimeFormat)
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Authorization", auth.Header(auth.Sign(key, "POST", "colls", "dbs/db", date)))
	req.Header.Set("x-ms-offer-throughput", "4000")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 201 {
		t.Fatalf("create container: %v %v", resp, err)
	}

	acked := map[string]string{} // id -> value acknowledged
	var mu sync.Mutex
	for round := 0; round < 3; round++ {
		var stop atomic.Bool
		var wg sync.WaitGroup
		var n atomic.Int64
		for w := 0; w < 16; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					id := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					pk := fmt.Sprintf("k%d", (w*7919+i)%211)
					val := fmt.Sprintf("%x", time.Now().UnixNano())
					body := fmt.Sprintf(`{"id":%q,"pk":%q,"val":%q,"pad":"%s"}`, id, pk, val, bytes.Repeat([]byte{'x'}, 512))
					st, _, err := call(p.url, "POST", "/dbs/db/colls/c/docs", fmt.Sprintf(`[%q]`, pk), []byte(body))
					if err != nil {
						return // the server died
					}
					if st == 201 {
						mu.Lock()
						acked[id+"|"+pk] = val
						mu.Unlock()
						n.Add(1)
					} else {
						t.Errorf("write %s: status %d", id, st)
						return
					}
				}
			}(w)
		}
		time.Sleep(time.Duration(700+300*round) * time.Millisecond)
		if err := p.cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		stop.Store(true)
		wg.Wait()
		<-p.exited
		if n.Load() == 0 {
			t.Fatalf("round %d: no write was acknowledged before the kill", round)
		}
		t.Logf("round %d: %d writes acknowledged before SIGKILL (%d in total)", round, n.Load(), len(acked))

		p = start(t, dir)
		missing := 0
		for k, val := range acked {
			var id, pk string
			for i := range k {
				if k[i] == '|' {
					id, pk = k[:i], k[i+1:]
				}
			}
			st, b, err := call(p.url, "GET", "/dbs/db/colls/c/docs/"+id, fmt.Sprintf(`[%q]`, pk), nil)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if st != 200 || json.Unmarshal(b, &doc) != nil || doc["val"] != val || doc["pk"] != pk {
				missing++
				if missing < 5 {
					t.Errorf("acknowledged write %s (pk %s) after restart: status %d body %.200s", id, pk, st, b)
				}
			}
		}
		if missing > 0 {
			t.Fatalf("round %d: %d of %d acknowledged writes lost or damaged", round, missing, len(acked))
		}
	}
	stopServer(t, p)
}
