package natsd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Three nodes on 127.0.0.1, protected by one token (so routes
// authenticate with the credentials Start adds to them), form a JetStream
// cluster: an R3 stream keeps taking and serving messages after a node
// shuts down, through a client given all three URLs.
func TestCluster3(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node JetStream cluster: seconds of leader elections")
	}
	start := time.Now()
	token := writeFile(t, t.TempDir(), "token", "cluster-secret-3\n")
	ports := freePorts(t, 6)
	var routes, urls []string
	for i := range 3 {
		routes = append(routes, "nats-route://"+hostPort(ports[3+i]))
	}
	var logs [3]syncBuffer
	var nodes []*Server
	for i := range 3 {
		s := startT(t, ServerOptions{
			Listen:        hostPort(ports[i]),
			Name:          "n" + string(rune('1'+i)),
			ClusterListen: hostPort(ports[3+i]),
			Routes:        routes,
			TokenFile:     token,
			Log:           &logs[i],
			Verbose:       true,
		})
		nodes = append(nodes, s)
		urls = append(urls, s.ClientURL())
		if s.RouteURL() != routes[i] {
			t.Errorf("RouteURL = %q, want %q", s.RouteURL(), routes[i])
		}
	}
	t.Logf("3 nodes up in %v", time.Since(start))
	nc := connectT(t, strings.Join(urls, ","), ClientOptions{TokenFile: token, Name: "cluster-test"})
	roundTrip(t, nc, "R3", 3, 20*time.Second)
	t.Logf("R3 stream written and read after %v", time.Since(start))

	// Lose the stream's leader: the other two elect a new one.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	st, err := js.Stream(ctx, "R3")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info: %v", err)
	}
	lost := -1
	for i, s := range nodes {
		if s.Name() == info.Cluster.Leader {
			lost = i
		}
	}
	if lost < 0 {
		t.Fatalf("stream leader %q is none of the nodes", info.Cluster.Leader)
	}
	nodes[lost].Shutdown()
	t.Logf("stream leader %s shut down at %v (client on %s)", nodes[lost].Name(), time.Since(start), nc.ConnectedUrl())
	roundTrip(t, nc, "R3", 3, 20*time.Second)
	t.Logf("R3 stream written and read again after %v", time.Since(start))

	if info, err = st.Info(ctx); err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Errorf("stream state %+v, cluster %+v: want 2 messages on a leader and 2 replicas", info.State, info.Cluster)
	}
	for i := range nodes {
		nodes[i].Shutdown()
		if l := logs[i].String(); strings.Contains(l, "cluster-secret-3") {
			t.Errorf("node %d logged the token:\n%s", i, l)
		} else if !strings.Contains(l, "Route connection created") {
			t.Errorf("node %d made no route:\n%s", i, l)
		}
	}
}

// waitRoutes waits up to d for s to have a route, and reports whether it
// has one.
func waitRoutes(s *Server, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if s.NATS().NumRemotes() > 0 {
			return true
		}
	}
	return s.NATS().NumRemotes() > 0
}

// Routes carry the node's protection: nodes sharing a token route to each
// other, a node with another token does not; with a CA, routes are mutual
// TLS and form between nodes whose certificates it signed.
func TestRouteSecurity(t *testing.T) {
	dir := t.TempDir()
	tokA := writeFile(t, dir, "a", "token-a\n")
	tokB := writeFile(t, dir, "b", "token-b\n")
	p := newPKI(t)
	ports := freePorts(t, 6)
	next := 0
	// node starts a node on the next free route port, routed to route
	// (or to itself).
	node := func(route string, o ServerOptions) *Server {
		o.ClusterListen = hostPort(ports[next])
		next++
		if route == "" {
			route = "nats-route://" + o.ClusterListen
		}
		o.Routes = []string{route}
		return startT(t, o)
	}

	a1 := node("", ServerOptions{TokenFile: tokA})
	a2 := node(a1.RouteURL(), ServerOptions{TokenFile: tokA})
	if !waitRoutes(a2, 5*time.Second) {
		t.Error("two nodes with one token made no route")
	}
	var lb, lm syncBuffer
	b := node(a1.RouteURL(), ServerOptions{TokenFile: tokB, Log: &lb})
	if !waitLog(&lb, "Authorization Violation", 5*time.Second) || b.NATS().NumRemotes() != 0 {
		t.Errorf("a node with another token: %d routes, log:\n%s", b.NATS().NumRemotes(), lb.String())
	}

	m1 := node("", ServerOptions{TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA, Log: &lm})
	m2 := node(m1.RouteURL(), ServerOptions{TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA})
	if !waitRoutes(m2, 5*time.Second) {
		t.Error("two nodes with certificates of one CA made no route")
	}
	plain := node(m1.RouteURL(), ServerOptions{})
	if !waitLog(&lm, "TLS route handshake error", 5*time.Second) || plain.NATS().NumRemotes() != 0 {
		t.Errorf("a node without TLS: %d routes, log of the node it routes to:\n%s", plain.NATS().NumRemotes(), lm.String())
	}
}

// waitLog waits up to d for the log to hold s, and reports whether it does.
func waitLog(log *syncBuffer, s string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(log.String(), s) {
			return true
		}
	}
	return strings.Contains(log.String(), s)
}
