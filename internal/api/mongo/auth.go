package mongo

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/xdg-go/scram"
	"go.mongodb.org/mongo-driver/v2/bson"
)

// Authentication: SCRAM-SHA-256, as Cosmos DB's MongoDB API does it, with
// the account name as the user and the account key as the password. A
// server with Config.RequireAuth runs only the handshake commands
// (anonymousCommands) until a connection has authenticated, and a
// connection that authenticated with the read-only key runs no command
// that writes (writeCommands).
//
// The server keeps no password: it derives SCRAM's stored credentials from
// each key once, with a salt drawn at start, so a captured conversation is
// useless against another server start.

// Default user names: the account name for the primary key, and the same
// with "-readonly" for the read-only key.
const (
	DefaultAccountName = "parsec"
	readOnlySuffix     = "-readonly"
	scramIterations    = 15000 // above the drivers' minimum of 4096 for SCRAM-SHA-256
	scramMechanism     = "SCRAM-SHA-256"
)

// authenticator holds the stored credentials of the server's users.
type authenticator struct {
	server   *scram.Server
	readOnly map[string]bool
}

// newAuthenticator derives the credentials of the account's users from the
// keys (base64, as given to the server); nil without a primary key.
func newAuthenticator(account, primary, readOnly string) (*authenticator, error) {
	if primary == "" {
		return nil, nil
	}
	salt := make([]byte, 28)
	if _, err := rand.Read(salt); err != nil {
		return nil, fmt.Errorf("cannot draw a SCRAM salt: %w", err)
	}
	kf := scram.KeyFactors{Salt: string(salt), Iters: scramIterations}
	creds := map[string]scram.StoredCredentials{}
	ro := map[string]bool{}
	for user, key := range map[string]string{account: primary, account + readOnlySuffix: readOnly} {
		if key == "" {
			continue
		}
		client, err := scram.SHA256.NewClient(user, key, "")
		if err != nil {
			return nil, fmt.Errorf("cannot derive SCRAM credentials for %q: %w", user, err)
		}
		c, err := client.GetStoredCredentialsWithError(kf)
		if err != nil {
			return nil, fmt.Errorf("cannot derive SCRAM credentials for %q: %w", user, err)
		}
		creds[user] = c
		ro[user] = user != account
	}
	srv, err := scram.SHA256.NewServer(func(user string) (scram.StoredCredentials, error) {
		c, ok := creds[user]
		if !ok {
			return scram.StoredCredentials{}, fmt.Errorf("unknown user %q", user)
		}
		return c, nil
	})
	if err != nil {
		return nil, err
	}
	return &authenticator{server: srv, readOnly: ro}, nil
}

// connAuth is a connection's authentication state.
type connAuth struct {
	conv     *scram.ServerConversation
	user     string // set once authenticated
	readOnly bool
	failures int // failed conversations on the connection
}

// maxAuthFailureDelay caps the delay after a failed authentication.
const maxAuthFailureDelay = 10 * time.Second

// failed answers a failed SCRAM conversation after a delay that grows with
// the connection's failures (Config.AuthFailureDelay times their number,
// up to maxAuthFailureDelay), which slows the guessing of keys; only the
// connection waits.
func (r *request) failed() error {
	failures := r.c.auth.failures + 1
	r.c.auth = connAuth{failures: failures}
	r.s.cfg.sleep(min(time.Duration(failures)*r.s.cfg.AuthFailureDelay, maxAuthFailureDelay))
	return newErr(18, "AuthenticationFailed", "Authentication failed.")
}

// anonymousCommands run before a connection authenticates.
var anonymousCommands = map[string]bool{
	"hello": true, "isMaster": true, "ismaster": true, "saslStart": true, "saslContinue": true,
	"ping": true, "buildInfo": true, "buildinfo": true, "endSessions": true, "logout": true,
}

// writeCommands change data or definitions; a read-only user cannot run them.
var writeCommands = map[string]bool{
	"insert": true, "update": true, "delete": true, "findAndModify": true, "findandmodify": true,
	"create": true, "drop": true, "dropDatabase": true, "createIndexes": true, "dropIndexes": true,
	"deleteIndexes": true, "shardCollection": true, "collMod": true, "renameCollection": true,
}

// authorize refuses a command the connection may not run yet, or at all.
func (r *request) authorize() error {
	a := r.s.auth
	if a == nil {
		return nil
	}
	if r.c.auth.user == "" {
		if anonymousCommands[r.name] || !r.s.cfg.RequireAuth {
			return nil
		}
		return unauthenticated(r.name)
	}
	if r.c.auth.readOnly && (writeCommands[r.name] || r.name == "customAction" && !readOnlyAction(r)) {
		return newErr(13, "Unauthorized", "not authorized to run %s: %s authenticated with the read-only key", r.name, r.c.auth.user)
	}
	return nil
}

// unauthenticated is the error of a command run before authenticating on
// a server that requires it.
func unauthenticated(name string) *cmdError {
	return newErr(13, "Unauthorized", "command %s requires authentication", name)
}

// handshakeOnly reports whether the connection may run only the handshake
// commands: the server requires authentication and the connection has not
// authenticated yet. Such a connection is also held to the limits of
// Config before authentication.
func (c *conn) handshakeOnly() bool {
	return c.s.auth != nil && c.s.cfg.RequireAuth && c.auth.user == ""
}

// readOnlyAction reports whether a customAction command only reads.
func readOnlyAction(r *request) bool {
	a, _ := r.str("customAction")
	return a == "GetCollection" || a == "GetDatabase"
}

// cmdSASL runs a SCRAM-SHA-256 conversation: saslStart with the client's
// first message, saslContinue with its final one. The server's final
// message comes with done: true, which the drivers accept without an empty
// round trip.
func cmdSASL(r *request) (bson.D, error) {
	a := r.s.auth
	if a == nil {
		return nil, newErr(18, "AuthenticationFailed", "this server has no keys and needs no authentication: connect without credentials")
	}
	if r.name == "saslStart" {
		if mech, _ := r.str("mechanism"); mech != scramMechanism {
			return nil, newErr(2, "BadValue", "Received authentication for mechanism %s which is not enabled: this server supports %s", mech, scramMechanism)
		}
		r.c.auth = connAuth{conv: a.server.NewConversation(), failures: r.c.auth.failures}
	} else if r.c.auth.conv == nil {
		return nil, newErr(17, "ProtocolError", "No SASL session state found: send saslStart first")
	}
	payload, err := saslPayload(r)
	if err != nil {
		return nil, err
	}
	conv := r.c.auth.conv
	resp, err := conv.Step(string(payload))
	if err != nil {
		return nil, r.failed()
	}
	done := conv.Done()
	if done {
		if !conv.Valid() {
			return nil, r.failed()
		}
		user := conv.Username()
		r.c.auth = connAuth{user: user, readOnly: a.readOnly[user]}
		r.s.authenticated(r.c)
	}
	return bson.D{
		{Key: "conversationId", Value: int32(1)},
		{Key: "done", Value: done},
		{Key: "payload", Value: bson.Binary{Data: []byte(resp)}},
	}, nil
}

// speculativeAuth runs the saslStart that a hello may carry in
// speculativeAuthenticate, and returns its reply for hello's; the driver
// then goes on with saslContinue, saving a round trip. When it fails (or
// names another mechanism) hello answers without it, and the driver
// authenticates from the start, as the handshake specification has it.
func (r *request) speculativeAuth() (bson.D, bool) {
	d, err := r.doc("speculativeAuthenticate")
	if err != nil || len(d) == 0 || d[0].Key != "saslStart" || r.s.auth == nil {
		return nil, false
	}
	out, err := cmdSASL(&request{c: r.c, s: r.s, name: "saslStart", db: r.db, cmd: d})
	if err != nil {
		return nil, false
	}
	return out, true
}

// saslPayload is the command's payload: binary, or a string as some
// clients send it.
func saslPayload(r *request) ([]byte, error) {
	v, _ := r.get("payload")
	switch p := v.(type) {
	case bson.Binary:
		return p.Data, nil
	case string:
		return []byte(p), nil
	}
	return nil, typeMismatch("BSON field '%s.payload' is the wrong type '%s', expected type 'binData'", r.name, typeName(v))
}

// saslSupportedMechs answers hello's saslSupportedMechs ("db.user"): the
// mechanisms of that user, which drivers use to choose one.
func (r *request) saslSupportedMechs() (bson.A, bool) {
	s, err := r.str("saslSupportedMechs")
	if err != nil || s == "" || r.s.auth == nil {
		return nil, false
	}
	_, user, _ := strings.Cut(s, ".")
	if user == "" {
		return nil, false
	}
	return bson.A{scramMechanism}, true
}
