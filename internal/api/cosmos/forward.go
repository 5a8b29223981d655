package cosmos

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parsecdb/parsec/internal/cluster"
	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/replication/host"
)

// Request forwarding, for what the gateway (internal/gateway) does not
// carry yet. Item writes go through the gateway, which sends the encoded
// command to the partition's leader over the cluster transport; what is
// left here is sent on as the client sent it (its signature is valid on
// every node, which share the account key) to another node's client
// endpoint, whose answer is the client's: catalog changes (a proposal to
// the meta group refused on a follower, with a host.NotLeaderError naming
// the leader), writes with triggers and stored procedures (scripts run in
// the leader's engine, refused likewise), and requests for a partition this
// node holds no replica of (cluster.NotHostedError). A refused proposal
// was not made, so sending it on can never write twice; a request whose
// outcome is unknown (host.ErrAmbiguous) is not sent on. A request is sent
// on at most maxHops times (leadership can move while it travels); then,
// or when no leader appears within leaderWait, the client gets 503, which
// the SDKs retry.
const (
	hdrHops    = "X-Parsec-Hops"
	maxHops    = 3
	leaderWait = 5 * time.Second
)

// forwarder sends requests on to other nodes. Over HTTPS it accepts from a
// node only the certificate that node says it serves (asked over the
// cluster transport, whose TLS and key authenticate the answer), whoever
// signed it: self-signed ones (--tls) and ones given with --cert alike. A
// forwarded request lasts as long as the client's request does: it ends
// when the client hangs up (net/http cancels the request's context then),
// not at a fixed time of its own.
type forwarder struct {
	// certificate returns the certificate (DER) node id serves to
	// clients, nil over plain HTTP (cluster.Node.ClientCertificate).
	certificate func(ctx context.Context, id uint64) ([]byte, error)
	plain       *http.Client
	mu          sync.Mutex
	pinned      map[uint64]*http.Client // per node, for its certificate
}

// errNotPinned is the error of a connection to a node that presented
// another certificate than the one it says it serves.
var errNotPinned = errors.New("the node presented another certificate than the one it serves")

func newForwarder(certificate func(ctx context.Context, id uint64) ([]byte, error)) *forwarder {
	return &forwarder{certificate: certificate, plain: &http.Client{Transport: newForwardTransport(nil)}, pinned: map[uint64]*http.Client{}}
}

func newForwardTransport(tc *tls.Config) *http.Transport {
	return &http.Transport{TLSClientConfig: tc, MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}
}

// client returns the client to send a request to node id at addr (a URL).
func (f *forwarder) client(ctx context.Context, id uint64, addr string) (*http.Client, error) {
	if !strings.HasPrefix(addr, "https:") {
		return f.plain, nil
	}
	f.mu.Lock()
	c := f.pinned[id]
	f.mu.Unlock()
	if c != nil {
		return c, nil
	}
	der, err := f.certificate(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cannot ask node %d for its certificate: %w", id, err)
	}
	if len(der) == 0 {
		return nil, fmt.Errorf("node %d serves no certificate at %s", id, addr)
	}
	c = &http.Client{Transport: newForwardTransport(&tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and the name are not checked: the certificate is
		// compared with the one the node serves, in VerifyConnection,
		// which crypto/tls documents for such a check.
		InsecureSkipVerify: true, //nolint:gosec // verified by VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 || !bytes.Equal(cs.PeerCertificates[0].Raw, der) {
				return errNotPinned
			}
			return nil
		},
	})}
	f.mu.Lock()
	f.pinned[id] = c
	f.mu.Unlock()
	return c, nil
}

// forget drops the certificate kept for node id, which will be asked for
// it again (it restarted with another, say).
func (f *forwarder) forget(id uint64) {
	f.mu.Lock()
	if c := f.pinned[id]; c != nil {
		c.CloseIdleConnections()
		delete(f.pinned, id)
	}
	f.mu.Unlock()
}

// forward sends the request on to the leader named by err, if err is a
// refusal by a follower, or to a replica, if err says this node holds no
// replica of the partition (cluster.NotHostedError: a container placed on
// other nodes); it reports whether it answered the client.
func (s *Server) forward(req *request, err error) (bool, error) {
	n := s.cfg.Cluster
	if n == nil || errors.Is(err, host.ErrAmbiguous) {
		return false, nil
	}
	hops, _ := strconv.Atoi(req.r.Header.Get(hdrHops))
	ctx, cancel := context.WithTimeout(req.r.Context(), leaderWait)
	defer cancel()
	// next names the node to send the request to, skip being one that
	// could not be reached.
	var next func(skip uint64) (uint64, error)
	var nl *host.NotLeaderError
	var nh *cluster.NotHostedError
	switch {
	case errors.As(err, &nh):
		// A partition this node holds no replica of: its replicas, in turn.
		cands := slices.DeleteFunc(slices.Clone(nh.Replicas), func(id uint64) bool { return id == n.ID() })
		next = func(uint64) (uint64, error) {
			if len(cands) == 0 {
				return 0, fmt.Errorf("no node of %v, which hold the partition, could be reached", nh.Replicas)
			}
			id := cands[0]
			cands = cands[1:]
			return id, nil
		}
	case errors.As(err, &nl):
		first := nl.Leader
		if first == n.ID() && hops > 0 {
			first = 0 // a stale answer: ask raft
		}
		next = func(skip uint64) (uint64, error) {
			if l := first; l != 0 && l != skip {
				first = 0
				return l, nil
			}
			return n.Leader(ctx, nl.Group, skip)
		}
	default:
		return false, nil
	}
	if hops >= maxHops {
		return false, fmt.Errorf("the request was sent on %d times while the leadership of its partition moved", hops)
	}
	var resp *http.Response
	var skip uint64
	asked := false // whether the leader was asked for its certificate again
	for {
		leader, lerr := next(skip)
		if lerr != nil {
			return false, lerr
		}
		m, ok := n.Member(leader)
		if !ok || m.Address == "" {
			return false, fmt.Errorf("the leader, node %d, has no known client address", leader)
		}
		var body io.Reader
		if req.body != nil {
			body = bytes.NewReader(req.body)
		}
		out, ferr := http.NewRequestWithContext(req.r.Context(), req.r.Method, strings.TrimSuffix(m.Address, "/")+req.r.URL.RequestURI(), body)
		if ferr != nil {
			return false, ferr
		}
		for k, v := range req.r.Header {
			switch k {
			case "Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length":
				continue
			}
			out.Header[k] = v
		}
		out.Header.Set(hdrHops, strconv.Itoa(hops+1))
		client, ferr := s.forwarder.client(ctx, leader, m.Address)
		if ferr != nil {
			// The node could not say which certificate it serves (it is
			// down, say): it was not sent the request, as below.
			if ctx.Err() != nil {
				return false, ferr
			}
			skip = leader
			continue
		}
		resp, ferr = client.Do(out)
		if ferr == nil {
			break
		}
		if errors.Is(ferr, errNotPinned) && !asked {
			// Refused before the request was sent: the node may have
			// restarted with another certificate.
			s.forwarder.forget(leader)
			asked = true
			continue
		}
		// A leader that cannot be reached was not sent the request: wait
		// for another one and send it there. Any other failure may have
		// come after the request arrived, so its outcome is unknown.
		var op *net.OpError
		if !errors.As(ferr, &op) || op.Op != "dial" || ctx.Err() != nil {
			return false, fmt.Errorf("node %d (%s) did not answer: %v", leader, m.Address, ferr)
		}
		skip = leader
	}
	defer resp.Body.Close()
	h := req.w.Header()
	for k := range h {
		delete(h, k)
	}
	for k, v := range resp.Header {
		switch k {
		case "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length":
			continue
		}
		h[k] = v
	}
	req.w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(req.w, resp.Body)
	return true, nil
}

// routeWrite sends a write to its partition's leader before the engine
// takes it, when this node knows another node leads (or holds) the
// partition: the refusal the engine would meet costs a round of the
// replication loop. The hint may be stale; the engine's own refusal is the
// rule.
func (s *Server) routeWrite(c *engine.Container, epk string) error {
	n := s.cfg.Cluster
	if n == nil {
		return nil
	}
	p := c.PartitionFor(epk)
	if err := n.Hosted(p); err != nil {
		return err
	}
	if lead := n.LeaderHint(p.GroupID()); lead != 0 && lead != n.ID() {
		return &host.NotLeaderError{Group: p.GroupID(), Node: n.ID(), Leader: lead}
	}
	return nil
}
