package natsd

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Server is a running node.
type Server struct {
	ns        *server.Server
	log       *logger
	clientURL string
	routeURL  string
	routes    []string
	done      chan struct{}
	once      sync.Once
}

// readyTimeout bounds the wait for the listeners in Start.
const readyTimeout = 10 * time.Second

// ErrNotReady is the error of a node whose listeners did not come up.
var ErrNotReady = errors.New("NATS server did not start")

// Start checks o (see Validate), starts a node and waits up to 10 s for
// its listeners. A node that cannot listen or start JetStream is shut down
// and its error returned, wrapping ErrNotReady.
func Start(o ServerOptions) (*Server, error) {
	c, err := o.build()
	if err != nil {
		return nil, err
	}
	return start(c, o)
}

// StartEmbedded starts the in-process node of --nats embedded: 127.0.0.1,
// any free client port, JetStream stored in dir, not clustered, no
// authentication (loopback only).
func StartEmbedded(dir string) (*Server, error) {
	return Start(ServerOptions{Listen: "127.0.0.1:0", StoreDir: dir, Name: "cpm-embedded"})
}

func start(c *config, o ServerOptions) (*Server, error) {
	ns, err := server.NewServer(c.opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotReady, err)
	}
	lg := &logger{w: o.Log, verbose: o.Verbose}
	ns.SetLoggerV2(lg, false, false, false)
	if c.plainExposure != "" {
		lg.Warnf("serving %s without TLS: secrets and messages cross the network in plain text (add --tls-cert and --tls-key)", c.plainExposure)
	}
	ns.Start()
	s := &Server{ns: ns, log: lg, done: make(chan struct{})}
	go func() {
		ns.WaitForShutdown()
		close(s.done)
	}()
	deadline := time.Now().Add(readyTimeout)
	for !ns.ReadyForConnections(50 * time.Millisecond) {
		if msg := lg.fatalMsg(); msg != "" {
			s.Shutdown()
			return nil, fmt.Errorf("%w: %s", ErrNotReady, msg)
		}
		if time.Now().After(deadline) {
			s.Shutdown()
			return nil, fmt.Errorf("%w: listeners not ready after %v", ErrNotReady, readyTimeout)
		}
	}
	if msg := lg.fatalMsg(); msg != "" { // JetStream failed after the listeners came up
		s.Shutdown()
		return nil, fmt.Errorf("%w: %s", ErrNotReady, msg)
	}
	if !ns.JetStreamEnabled() {
		s.Shutdown()
		return nil, fmt.Errorf("%w: JetStream is not enabled", ErrNotReady)
	}
	scheme := "nats"
	if c.tls {
		scheme = "tls"
	}
	if a, ok := ns.Addr().(*net.TCPAddr); ok {
		s.clientURL = scheme + "://" + net.JoinHostPort(dialHost(c.host), strconv.Itoa(a.Port))
	}
	if a := ns.ClusterAddr(); a != nil {
		s.routeURL = "nats-route://" + net.JoinHostPort(dialHost(c.opts.Cluster.Host), strconv.Itoa(a.Port))
	}
	for _, u := range c.opts.Routes {
		r := *u
		r.User = nil
		s.routes = append(s.routes, r.String())
	}
	return s, nil
}

// dialHost is the host a local client dials to reach a listener on host:
// loopback for the unspecified addresses.
func dialHost(host string) string {
	switch host {
	case "", "0.0.0.0":
		return "127.0.0.1"
	case "::":
		return "::1"
	}
	return host
}

// ClientURL returns the URL clients connect to, with the port the node
// listens on: nats://HOST:PORT, or tls://HOST:PORT with TLS. A node that
// listens on every interface gives the loopback address.
func (s *Server) ClientURL() string { return s.clientURL }

// RouteURL returns the URL other nodes route to, nats-route://HOST:PORT,
// or "" for a node that is not clustered. It holds no credentials.
func (s *Server) RouteURL() string { return s.routeURL }

// Routes returns the route URLs the node connects to, without
// credentials.
func (s *Server) Routes() []string { return s.routes }

// Done returns a channel closed when the node has shut down, by Shutdown
// or by itself.
func (s *Server) Done() <-chan struct{} { return s.done }

// Name returns the server name.
func (s *Server) Name() string { return s.ns.Name() }

// NATS returns the nats-server of the node.
func (s *Server) NATS() *server.Server { return s.ns }

// Shutdown stops the node and waits until it has: connections closed,
// JetStream flushed, every server goroutine done. The log is silent
// afterwards. Shutdown may be called more than once.
func (s *Server) Shutdown() {
	s.once.Do(func() {
		s.ns.Shutdown()
		s.ns.WaitForShutdown()
		s.log.close()
	})
}
