// Command trivialhttp is a trivial net/http server for baselines: it answers
// every request with the same small JSON body, so `parsec bench --workload
// trivial` against it measures the HTTP stack and the load generator alone.
//
//	go run ./cmd/trivialhttp --listen 127.0.0.1:8090
package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"
)

// body is the fixed response: 70 bytes of JSON, like a tiny JSON API's.
var body = []byte(`{"id":"trivial","status":"ok","message":"hello from trivialhttp","n":1}`)

func main() {
	listen := flag.String("listen", "127.0.0.1:8090", "address to listen on, HOST:PORT")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "trivialhttp: unexpected argument %q\n", flag.Arg(0))
		os.Exit(2)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 30 * time.Second}
	fmt.Printf("trivialhttp: listening on http://%s\n", *listen)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "trivialhttp: %v\n", err)
		os.Exit(1)
	}
}
