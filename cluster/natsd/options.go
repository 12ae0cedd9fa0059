package natsd

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
)

// Defaults of ServerOptions.
const (
	DefaultListen      = "127.0.0.1:4222"
	DefaultClusterName = "cpm"
	DefaultMaxPayload  = 8 << 20

	// maxPayloadLimit is nats-server's own cap on max_payload.
	maxPayloadLimit = 64 << 20

	// tokenRouteUser is the route user name when a token protects the node:
	// routes authenticate with user and password only, so the token is the
	// password of this user.
	tokenRouteUser = "cpm"

	tlsTimeout = 2 // seconds, nats-server's default
)

// Kinds of configuration errors of Start and Validate.
var (
	// ErrOptions marks options that are invalid in themselves: a malformed
	// address, two authentication methods, a certificate without its key,
	// an empty secret file.
	ErrOptions = errors.New("invalid options")
	// ErrInsecure marks an address that is not loopback with no
	// authentication to protect it.
	ErrInsecure = errors.New("refusing to serve an address that is not loopback without authentication")
)

// optError is a configuration error whose message names the flag at
// fault; it wraps ErrOptions or ErrInsecure.
type optError struct {
	msg  string
	kind error
}

func (e *optError) Error() string { return e.msg }
func (e *optError) Unwrap() error { return e.kind }

func badOption(format string, a ...any) error {
	return &optError{fmt.Sprintf(format, a...), ErrOptions}
}

// ServerOptions configure a node. Errors name the flags of AddServerFlags
// that set each field. The zero value is a standalone node on
// 127.0.0.1:4222 except that StoreDir is required.
type ServerOptions struct {
	// Listen is the HOST:PORT of the client port (--listen). The default is
	// "127.0.0.1:4222"; port 0 picks a free port (see Server.ClientURL).
	Listen string
	// StoreDir is the JetStream storage directory (--store). Required.
	StoreDir string
	// Name is the server name, unique in a cluster (--name). The default is
	// the host name and the client port ("myhost-4222"), with a random
	// suffix instead of the port when the port is 0.
	Name string

	// ClusterListen is the HOST:PORT of the route port (--cluster); "" is a
	// node that is not clustered. Port 0 picks a free port.
	ClusterListen string
	// ClusterName is the cluster's name (--cluster-name), the same on
	// every node. The default is "cpm".
	ClusterName string
	// Routes are the route URLs of the other nodes (--routes):
	// nats-route://HOST:PORT, or HOST:PORT. A node may list itself.
	Routes []string

	// Authentication of clients: at most one of a token, a user with a
	// password, or NKeys. Secret files hold the secret on their first
	// line; surrounding white space is trimmed.
	TokenFile    string // file holding the token (--nats-token-file)
	User         string // user name (--nats-user), with PasswordFile
	PasswordFile string // file holding User's password (--nats-password-file)
	// NKeysFile holds the NKey public user keys ("U...") that may connect,
	// one a line; blank lines and lines starting with # are skipped
	// (--nats-nkey-users).
	NKeysFile string

	// TLS: TLSCert and TLSKey are the node's certificate and key
	// (--tls-cert, --tls-key), both or neither. With TLSCA (--tls-ca)
	// clients must present a certificate signed by it, which
	// authenticates them, and routes use mutual TLS.
	TLSCert, TLSKey, TLSCA string

	// Log receives the server's warnings and errors, one line each (nil:
	// none); with Verbose also its notices.
	Log     io.Writer
	Verbose bool

	// MaxPayload is the largest message in bytes (--max-payload). The
	// default is 8 MiB; at most 64 MiB.
	MaxPayload int32
}

// config is ServerOptions checked and resolved: the nats-server options
// and what Start reports.
type config struct {
	opts          *server.Options
	host          string // client listen host as given
	tls           bool
	plainExposure string // a non-loopback address served without TLS, for a warning
}

// Validate checks the options as Start does, reading the secret and TLS
// files, without starting anything. Its errors wrap ErrOptions or
// ErrInsecure for a bad configuration, and *fs.PathError for a file
// that cannot be read.
func (o ServerOptions) Validate() error {
	_, err := o.build()
	return err
}

// authMethod is how clients authenticate.
type authMethod int

const (
	authNone authMethod = iota
	authToken
	authUser
	authNKeys
)

// build checks o and returns the nats-server options. Checks of the
// options themselves come first, then the files are read.
func (o ServerOptions) build() (*config, error) {
	listen := o.Listen
	if listen == "" {
		listen = DefaultListen
	}
	host, port, err := splitHostPort("--listen", listen)
	if err != nil {
		return nil, err
	}
	if o.StoreDir == "" {
		return nil, badOption("--store is required: the JetStream storage directory")
	}
	var chost string
	var cport int
	if o.ClusterListen != "" {
		if chost, cport, err = splitHostPort("--cluster", o.ClusterListen); err != nil {
			return nil, err
		}
		if len(o.Routes) == 0 {
			return nil, badOption("--cluster needs --routes: the route URLs of the other nodes (a node may list itself)")
		}
	} else if len(o.Routes) > 0 {
		return nil, badOption("--routes needs --cluster HOST:PORT, the address other nodes route to")
	}
	if o.ClusterName != "" && strings.ContainsAny(o.ClusterName, " \t\r\n") {
		return nil, badOption("--cluster-name %q: white space is not allowed", o.ClusterName)
	}
	if strings.ContainsAny(o.Name, " \t\r\n") {
		return nil, badOption("--name %q: white space is not allowed", o.Name)
	}
	maxPayload := o.MaxPayload
	switch {
	case maxPayload == 0:
		maxPayload = DefaultMaxPayload
	case maxPayload < 0 || maxPayload > maxPayloadLimit:
		return nil, badOption("--max-payload %d: want 1 to %d bytes", maxPayload, maxPayloadLimit)
	}

	method, err := o.authMethod()
	if err != nil {
		return nil, err
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, badOption("--tls-cert and --tls-key go together: give both or neither")
	}
	if o.TLSCA != "" && o.TLSCert == "" {
		return nil, badOption("--tls-ca needs --tls-cert and --tls-key: the node's own certificate")
	}
	mutualTLS := o.TLSCA != ""
	if !isLoopback(host) && method == authNone && !mutualTLS {
		return nil, &optError{fmt.Sprintf("--listen %s: %v: add --nats-token-file FILE, "+
			"--nats-user NAME with --nats-password-file FILE, --nats-nkey-users FILE, "+
			"or --tls-cert, --tls-key and --tls-ca (client certificates); or listen on 127.0.0.1",
			listen, ErrInsecure), ErrInsecure}
	}
	if o.ClusterListen != "" && !isLoopback(chost) && !mutualTLS {
		switch method {
		case authNone:
			return nil, &optError{fmt.Sprintf("--cluster %s: %v: add --nats-token-file FILE, "+
				"--nats-user NAME with --nats-password-file FILE, "+
				"or --tls-cert, --tls-key and --tls-ca (mutual TLS on routes); or use 127.0.0.1",
				o.ClusterListen, ErrInsecure), ErrInsecure}
		case authNKeys:
			return nil, &optError{fmt.Sprintf("--cluster %s: %v: NKeys do not protect routes; "+
				"add --tls-cert, --tls-key and --tls-ca (mutual TLS on routes), "+
				"or protect the node with --nats-token-file or --nats-user instead",
				o.ClusterListen, ErrInsecure), ErrInsecure}
		}
	}
	routes := make([]*url.URL, 0, len(o.Routes))
	for i, r := range o.Routes {
		u, err := parseRoute(i, r)
		if err != nil {
			return nil, err
		}
		routes = append(routes, u)
	}

	opts := &server.Options{
		ServerName:             o.Name,
		Host:                   host,
		Port:                   listenPort(port),
		JetStream:              true,
		StoreDir:               o.StoreDir,
		MaxPayload:             maxPayload,
		NoSigs:                 true,
		NoLog:                  true,
		DisableJetStreamBanner: true,
	}
	if opts.ServerName == "" {
		opts.ServerName = defaultName(port)
	}

	// Secrets.
	var routeUser, routePass string
	switch method {
	case authToken:
		tok, err := readSecret("--nats-token-file", o.TokenFile)
		if err != nil {
			return nil, err
		}
		opts.Authorization = tok
		routeUser, routePass = tokenRouteUser, tok
	case authUser:
		pass, err := readSecret("--nats-password-file", o.PasswordFile)
		if err != nil {
			return nil, err
		}
		opts.Username, opts.Password = o.User, pass
		routeUser, routePass = o.User, pass
	case authNKeys:
		keys, err := readNKeys(o.NKeysFile)
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: k})
		}
	}

	// TLS.
	if o.TLSCert != "" {
		tc, err := tlsConfig(o, false)
		if err != nil {
			return nil, err
		}
		opts.TLS, opts.TLSVerify, opts.TLSConfig, opts.TLSTimeout = true, mutualTLS, tc, tlsTimeout
	}

	if o.ClusterListen != "" {
		opts.Cluster = server.ClusterOpts{
			Name: o.ClusterName,
			Host: chost,
			Port: listenPort(cport),
		}
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = DefaultClusterName
		}
		if routeUser != "" {
			opts.Cluster.Username, opts.Cluster.Password = routeUser, routePass
			for _, u := range routes {
				if u.User == nil {
					u.User = url.UserPassword(routeUser, routePass)
				}
			}
		}
		if mutualTLS {
			tc, err := tlsConfig(o, true)
			if err != nil {
				return nil, err
			}
			opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, tlsTimeout
		}
		opts.Routes = routes
	}

	c := &config{opts: opts, host: host, tls: o.TLSCert != ""}
	if !c.tls {
		switch {
		case !isLoopback(host):
			c.plainExposure = listen
		case o.ClusterListen != "" && !isLoopback(chost):
			c.plainExposure = o.ClusterListen
		}
	}
	return c, nil
}

// authMethod returns the one client authentication method o configures.
func (o ServerOptions) authMethod() (authMethod, error) {
	var given []string
	method := authNone
	if o.TokenFile != "" {
		given, method = append(given, "--nats-token-file"), authToken
	}
	if o.User != "" || o.PasswordFile != "" {
		if o.User == "" {
			return 0, badOption("--nats-password-file needs --nats-user")
		}
		if o.PasswordFile == "" {
			return 0, badOption("--nats-user needs --nats-password-file")
		}
		given, method = append(given, "--nats-user"), authUser
	}
	if o.NKeysFile != "" {
		given, method = append(given, "--nats-nkey-users"), authNKeys
	}
	if len(given) > 1 {
		return 0, badOption("%s: give one authentication method", strings.Join(given, " and "))
	}
	return method, nil
}

// tlsConfig loads the node's certificate; with TLSCA, peers must present
// a certificate signed by it. For routes the node is also the client, so
// TLSCA verifies the other node's certificate too.
func tlsConfig(o ServerOptions, routes bool) (*tls.Config, error) {
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{
		CertFile: o.TLSCert,
		KeyFile:  o.TLSKey,
		CaFile:   o.TLSCA,
		Verify:   o.TLSCA != "",
		Timeout:  tlsTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("--tls-cert, --tls-key, --tls-ca: %w", err)
	}
	if routes {
		tc.RootCAs = tc.ClientCAs
	}
	return tc, nil
}

// splitHostPort splits a HOST:PORT address given to flag.
func splitHostPort(flag, addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, badOption("%s %q: want HOST:PORT (%v)", flag, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, badOption("%s %q: port %q is not 0 to 65535", flag, addr, p)
	}
	return host, port, nil
}

// listenPort maps port 0 (any free port) to nats-server's RANDOM_PORT; its
// own 0 means the default port.
func listenPort(port int) int {
	if port == 0 {
		return server.RANDOM_PORT
	}
	return port
}

// isLoopback reports whether host is a loopback address: localhost,
// 127.0.0.0/8 or ::1. The empty host and the unspecified addresses are
// every interface, not loopback; other names are not resolved and count
// as not loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseRoute parses the i-th route URL. Its errors never print the URL,
// which may hold credentials.
func parseRoute(i int, s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		s = "nats-route://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, badOption("--routes: route %d is not a URL nats-route://HOST:PORT", i+1)
	}
	switch u.Scheme {
	case "nats-route", "nats", "tls":
	default:
		return nil, badOption("--routes %s: scheme %q: want nats-route://HOST:PORT", u.Redacted(), u.Scheme)
	}
	if u.Hostname() == "" || u.Port() == "" {
		return nil, badOption("--routes %s: want nats-route://HOST:PORT", u.Redacted())
	}
	if p, err := strconv.Atoi(u.Port()); err != nil || p < 1 || p > 65535 {
		return nil, badOption("--routes %s: port %q is not 1 to 65535", u.Redacted(), u.Port())
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, badOption("--routes %s: want nats-route://HOST:PORT, without a path or query", u.Redacted())
	}
	return u, nil
}

// defaultName is the host name and the client port, or a random suffix
// when the port is picked at start.
func defaultName(port int) string {
	host, err := os.Hostname()
	if err != nil || host == "" || strings.ContainsAny(host, " \t\r\n") {
		host = "cpm"
	}
	if port != 0 {
		return host + "-" + strconv.Itoa(port)
	}
	var b [4]byte
	rand.Read(b[:])
	return host + "-" + hex.EncodeToString(b[:])
}
