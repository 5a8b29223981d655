package server

import (
	"encoding/base64"
	"net"
	"strings"
	"testing"

	"github.com/parsecdb/parsec/internal/auth"
)

// TestValidateGremlinListen: the Gremlin API is refused off loopback with
// the emulator key, and its address must be HOST:PORT.
func TestValidateGremlinListen(t *testing.T) {
	strong := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 64)))
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "0.0.0.0:8901"}, "emulator key"},
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "0.0.0.0:8901", Key: auth.EmulatorKey}, "/dbs/<database>/colls/<graph>"},
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "nonsense"}, "HOST:PORT"},
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "127.0.0.1:8901", GremlinMaxConnections: -1}, "negative"},
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "0.0.0.0:8901", Key: strong}, ""},
		{Options{Listen: "127.0.0.1:8081", GremlinListen: "127.0.0.1:8901"}, ""},
	} {
		c.o.InMemory = true
		err := c.o.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Validate(gremlin %q, key %q): %v, want nil", c.o.GremlinListen, c.o.Key, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Validate(gremlin %q, key %q) = %v, want an error saying %q", c.o.GremlinListen, c.o.Key, err, c.want)
		}
	}
}

// TestGremlinListenBusy: a Gremlin address already taken fails Start with
// a message naming the flag, and releases what Start had opened.
func TestGremlinListenBusy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Start(Options{Listen: "127.0.0.1:0", InMemory: true, GremlinListen: ln.Addr().String(), MongoListen: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "--gremlin-listen") {
		t.Fatalf("Start on a busy Gremlin address: %v", err)
	}
}
