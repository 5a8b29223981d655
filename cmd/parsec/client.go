package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/auth"
)

// clientFlags are the flags every client subcommand takes, with the same
// defaults: the local server and the emulator key.
type clientFlags struct {
	endpoint string
	key      string
}

func (c *clientFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.endpoint, "endpoint", "http://127.0.0.1:8081", "the server's endpoint URL")
	fs.StringVar(&c.key, "key", auth.EmulatorKey, "master key (base64)")
}

// parseInterleaved parses flags that may come before or after the
// positional arguments (parsec partitions db/c --endpoint URL) and returns
// the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// get sends a signed GET for a resource path such as /dbs/d/colls/c/partitions.
func (c *clientFlags) get(path string, v any) error {
	key, err := auth.DecodeKey(c.key)
	if err != nil {
		return fmt.Errorf("--key is not a valid base64 key: %v", err)
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	esc := make([]string, len(segs))
	for i, s := range segs {
		esc[i] = url.PathEscape(s)
	}
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(c.endpoint, "/")+"/"+strings.Join(esc, "/"), nil)
	if err != nil {
		return fmt.Errorf("--endpoint %q is not a URL: %v", c.endpoint, err)
	}
	date := time.Now().UTC().Format(http.TimeFormat)
	typ, link := auth.Resource(strings.Join(segs, "/"))
	req.Header.Set("x-ms-date", date)
	req.Header.Set("x-ms-version", "2020-11-05")
	req.Header.Set("Authorization", auth.Header(auth.Sign(key, http.MethodGet, typ, link, date)))
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach %s: %v", c.endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Code, Message string }
		if json.Unmarshal(body, &e) == nil && e.Message != "" {
			return fmt.Errorf("%s: %s", e.Code, e.Message)
		}
		return fmt.Errorf("the server answered %s", resp.Status)
	}
	return json.Unmarshal(body, v)
}

// writeJSON prints v as indented JSON, what the --json flags print.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
