package tables

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

const readOnlyKey = "cmVhZG9ubHlyZWFkb25seXJlYWRvbmx5cmVhZG9ubHlyZWFkb25seXJlYWRvbmx5cmVhZG9ubHlyZWFkb25seQ=="

// startServer runs a real server with the Table API on a loopback port.
func startServer(t *testing.T, o server.Options) *server.Server {
	t.Helper()
	o.Listen = "127.0.0.1:0"
	o.TableListen = "127.0.0.1:0"
	o.InMemory = true
	if o.ReadOnlyKey == "" {
		o.ReadOnlyKey = readOnlyKey
	}
	if o.TableThroughput == 0 {
		// Enough that the functional tests are not throttled; tables
		// start on two physical partitions.
		o.TableThroughput = 12000
	}
	s, err := server.Start(o)
	if err != nil {
		t.Fatalf("cannot start server: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return s
}

// style is how a client addresses the server.
type style int

const (
	// hostStyle is the Cosmos DB emulator's endpoint,
	// http://localhost:8902/, account "localhost": the SDK sends MERGE as
	// POST with X-HTTP-Method. The client's connections are dialled to
	// the test server's real port.
	hostStyle style = iota
	// pathStyle is Azurite's: http://127.0.0.1:PORT/devstoreaccount1,
	// and PATCH.
	pathStyle
)

func (s style) String() string { return [...]string{"host", "path"}[s] }

var styles = []style{hostStyle, pathStyle}

// endpoint is the TableEndpoint and account a client of style st uses.
func endpoint(s *server.Server, st style) (string, string) {
	if st == hostStyle {
		return "http://localhost:8902/", "localhost"
	}
	return "http://" + s.TableAddr() + "/devstoreaccount1", "devstoreaccount1"
}

// clientOptions sends every request to the test server, whatever host
// the URL names, and records the requests' methods.
func clientOptions(s *server.Server, seen *[]string) *aztables.ClientOptions {
	addr := s.TableAddr()
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	o := &aztables.ClientOptions{}
	o.Transport = &http.Client{Transport: recorder{tr, seen}}
	o.Retry.MaxRetries = -1
	return o
}

type recorder struct {
	rt   http.RoundTripper
	seen *[]string
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.seen != nil {
		m := req.Method
		if x := req.Header.Get("X-HTTP-Method"); x != "" {
			m += "+" + x
		}
		*r.seen = append(*r.seen, m)
	}
	return r.rt.RoundTrip(req)
}

// service returns a service client of style st signed with key.
func service(t *testing.T, s *server.Server, st style, key string) *aztables.ServiceClient {
	t.Helper()
	return serviceSeen(t, s, st, key, nil)
}

func serviceSeen(t *testing.T, s *server.Server, st style, key string, seen *[]string) *aztables.ServiceClient {
	t.Helper()
	ep, account := endpoint(s, st)
	cs := "DefaultEndpointsProtocol=http;AccountName=" + account + ";AccountKey=" + key + ";TableEndpoint=" + ep + ";"
	c, err := aztables.NewServiceClientFromConnectionString(cs, clientOptions(s, seen))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newTable creates a table and returns its client.
func newTable(t *testing.T, svc *aztables.ServiceClient, name string) *aztables.Client {
	t.Helper()
	if _, err := svc.CreateTable(context.Background(), name, nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return svc.NewClient(name)
}

// code returns the Table error code of err ("" when it is not one).
func code(err error) string {
	if te, ok := err.(*azcore.ResponseError); ok {
		return te.ErrorCode
	}
	var re *azcore.ResponseError
	if errorsAs(err, &re) {
		return re.ErrorCode
	}
	return ""
}

func status(err error) int {
	var re *azcore.ResponseError
	if errorsAs(err, &re) {
		return re.StatusCode
	}
	return 0
}

var emulatorKey = auth.EmulatorKey

var _ = strings.Contains
var _ policy.ClientOptions
