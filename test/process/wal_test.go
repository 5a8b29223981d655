package process

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/testbin"
)

// urlRe finds the address in the line parsec serve prints once it serves.
var urlRe = regexp.MustCompile(`on (http://[^ ]+) `)

// server is a running parsec serve process.
type server struct {
	url    string
	cmd    *exec.Cmd
	exited chan error
}

// run starts parsec serve on dataDir with extra flags. If the server comes
// up it returns it; if it exits first, it returns its exit error. out
// collects everything it prints.
func run(t *testing.T, dataDir string, extra ...string) (s *server, out *testbin.Output, exitErr error) {
	t.Helper()
	args := append([]string{"serve", "--data", dataDir, "--listen", "127.0.0.1:0", "--no-throttle"}, extra...)
	cmd := exec.Command(parsecBin, args...)
	out = &testbin.Output{}
	pr, pw := io.Pipe()
	cmd.Stdout = io.MultiWriter(out, pw)
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := urlRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	select {
	case u := <-found:
		return &server{url: u, cmd: cmd, exited: exited}, out, nil
	case err := <-exited:
		if err == nil {
			err = fmt.Errorf("exited with status 0")
		}
		return nil, out, err
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("server neither started nor exited within 30s; output:\n%s", out)
	}
	return nil, nil, nil
}

// stopServer stops a server with SIGINT and waits until it has exited.
func stopServer(t *testing.T, s *server) {
	t.Helper()
	s.cmd.Process.Signal(os.Interrupt)
	if err := <-s.exited; err != nil {
		t.Errorf("clean stop: %v", err)
	}
}

func mustCall(t *testing.T, base, method, path, pk string, body []byte, hdr ...string) {
	t.Helper()
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(body))
	auth.SignRequest(req, key, time.Now())
	if pk != "" {
		req.Header.Set("x-ms-documentdb-partitionkey", pk)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
	}
}

// populated returns a data directory holding a container with n
// acknowledged writes of about pad bytes each, sent by workers clients at
// once, after a clean stop.
func populated(t *testing.T, n, pad, workers int) string {
	t.Helper()
	dir := t.TempDir()
	p, out, err := run(t, dir)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, out)
	}
	mustCall(t, p.url, "POST", "/dbs", "", []byte(`{"id":"db"}`))
	mustCall(t, p.url, "POST", "/dbs/db/colls", "", []byte(`{"id":"c","partitionKey":{"paths":["/pk"],"kind":"Hash","version":2}}`),
		"x-ms-offer-throughput", "4000")
	text := strings.Repeat("x", pad)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				pk := fmt.Sprintf("k%d", i%37)
				mustCall(t, p.url, "POST", "/dbs/db/colls/c/docs", fmt.Sprintf(`[%q]`, pk), []byte(fmt.Sprintf(`{"id":"%d","pk":%q,"pad":%q}`, i, pk, text)))
			}
		}()
	}
	wg.Wait()
	stopServer(t, p)
	return dir
}

// wals returns the write-ahead log files of dir, oldest first.
func wals(t *testing.T, dir string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(logs)
	return logs
}

// newestWAL returns the newest write-ahead log that holds records.
func newestWAL(t *testing.T, dir string) string {
	t.Helper()
	logs := wals(t, dir)
	for i := len(logs) - 1; i >= 0; i-- {
		if fi, err := os.Stat(logs[i]); err == nil && fi.Size() > 64<<10 {
			return logs[i]
		}
	}
	t.Fatalf("no write-ahead log with records in %s: %v", dir, logs)
	return ""
}

// TestDamagedWALRefusesToStart damages the write-ahead log of a cleanly
// stopped server three ways. Each time the server must refuse to start,
// saying what is damaged and what is missing; with --accept-data-loss it
// must start and log what was lost; and after that it starts normally.
func TestDamagedWALRefusesToStart(t *testing.T) {
	const writes = 300
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string) string // returns a file the refusal must name
		refuse []string
		lost   []string
	}{
		{
			name: "flip",
			damage: func(t *testing.T, dir string) string {
				f := newestWAL(t, dir)
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for i := len(b) / 2; i < len(b)/2+16; i++ {
					b[i] ^= 0xff
				}
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return f
			},
			refuse: []string{"is damaged at byte", "--accept-data-loss"},
			lost:   []string{"DATA LOSS accepted", "the log was cut there", `container "db"/"c" partition key range 0: acknowledged up to LSN`},
		},
		{
			name: "truncate",
			damage: func(t *testing.T, dir string) string {
				f := newestWAL(t, dir)
				fi, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(f, fi.Size()/2); err != nil {
					t.Fatal(err)
				}
				return f
			},
			refuse: []string{`container "db"/"c" partition key range 0: acknowledged up to LSN ` + fmt.Sprint(writes), "write-ahead log is damaged or missing", "--accept-data-loss"},
			lost:   []string{"DATA LOSS accepted", `container "db"/"c" partition key range 0: acknowledged up to LSN ` + fmt.Sprint(writes)},
		},
		{
			name: "delete",
			damage: func(t *testing.T, dir string) string {
				for _, f := range wals(t, dir) {
					if err := os.Remove(f); err != nil {
						t.Fatal(err)
					}
				}
				return "there is no write-ahead log file in " + dir
			},
			refuse: []string{`container "db"/"c"`, "is missing, with the writes acknowledged up to LSN " + fmt.Sprint(writes), "--accept-data-loss"},
			lost:   []string{"DATA LOSS accepted", "is missing, with the writes acknowledged up to LSN " + fmt.Sprint(writes)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := populated(t, writes, 400, 1)
			named := tc.damage(t, dir)

			p, out, err := run(t, dir)
			if err == nil {
				stopServer(t, p)
				t.Fatalf("started on a damaged write-ahead log; output:\n%s", out)
			}
			for _, want := range append([]string{named}, tc.refuse...) {
				if !strings.Contains(out.String(), want) {
					t.Errorf("refusal does not say %q; output:\n%s", want, out)
				}
			}

			p, out, err = run(t, dir, "--accept-data-loss")
			if err != nil {
				t.Fatalf("--accept-data-loss did not start: %v\n%s", err, out)
			}
			stopServer(t, p)
			for _, want := range tc.lost {
				if !strings.Contains(out.String(), want) {
					t.Errorf("start with --accept-data-loss does not log %q; output:\n%s", want, out)
				}
			}

			p, out, err = run(t, dir)
			if err != nil {
				t.Fatalf("restart after accepting the loss: %v\n%s", err, out)
			}
			stopServer(t, p)
			if strings.Contains(out.String(), "DATA LOSS") {
				t.Errorf("restart after accepting the loss reports it again:\n%s", out)
			}
		})
	}
}
