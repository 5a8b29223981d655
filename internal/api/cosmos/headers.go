package cosmos

import (
	"net/http"
	"strings"
)

// Cosmos sends its own response header names in lower case (x-ms-continuation,
// x-ms-session-token, x-ms-retry-after-ms, etag, lsn, ...), and some clients
// look them up case-sensitively: with another case they silently stop
// paging, skip retry waits or lose session tokens. Handlers set headers
// under any case (Header().Set canonicalizes); lowerWriter rewrites the
// names of Cosmos's headers to lower case just before the response's header
// is written. Standard HTTP headers (Content-Type, Content-Length, Date)
// keep their usual case, as the service sends them.
type lowerWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *lowerWriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		lowerNames(w.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *lowerWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *lowerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// lowerCase holds the lower-case form of the header names handlers set,
// so that rewriting them allocates nothing.
var lowerCase = map[string]string{}

func init() {
	for _, n := range []string{"Etag", "Lsn", hActivityID, hRequestCharge, hSessionToken, hGatewayVer,
		"X-Ms-Continuation", "X-Ms-Retry-After-Ms", "X-Ms-Substatus", "X-Ms-Item-Count", "X-Ms-Resource-Quota",
		"X-Ms-Resource-Usage", "X-Ms-Schemaversion", "X-Ms-Alt-Content-Path", "X-Ms-Content-Path",
		"X-Ms-Documentdb-Query-Metrics", "X-Ms-Cosmos-Index-Utilization", "X-Ms-Cosmos-Min-Throughput",
		"X-Ms-Offer-Replace-Pending", "X-Ms-Documentdb-Partitionkeyrangeid", "X-Ms-Cosmos-Llsn",
		"X-Ms-Global-Committed-Lsn", "X-Ms-Number-Of-Read-Regions", "X-Ms-Transport-Request-Id",
		"X-Ms-Documentdb-Script-Log-Results", "X-Ms-Max-Media-Storage-Usage-Mb", "X-Ms-Media-Storage-Usage-Mb",
		"X-Ms-Databaseaccount-Consumed-Mb", "X-Ms-Databaseaccount-Reserved-Mb", "X-Ms-Databaseaccount-Provisioned-Mb",
		"X-Ms-Cosmos-Is-Partition-Key-Delete-Pending", "X-Ms-Documentdb-Collection-Index-Transformation-Progress"} {
		c := http.CanonicalHeaderKey(n)
		lowerCase[c] = strings.ToLower(c)
	}
}

// cosmosHeader reports whether a canonical header name is one of Cosmos's
// own (sent in lower case).
func cosmosHeader(name string) bool {
	return strings.HasPrefix(name, "X-Ms-") || name == "Etag" || name == "Lsn"
}

// lowerNames rewrites the names of Cosmos's headers in h to lower case.
func lowerNames(h http.Header) {
	for k, v := range h {
		if !cosmosHeader(k) {
			continue
		}
		l, ok := lowerCase[k]
		if !ok {
			l = strings.ToLower(k)
		}
		delete(h, k)
		h[l] = v
	}
}
