package natsd

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// ClientOptions are a client's connection settings (coordinator, worker,
// status): at most one authentication method (a token, a user with a
// password, a credentials file or an NKey seed), TLS, and a name. The
// zero value connects without authentication or TLS.
type ClientOptions struct {
	TokenFile    string // file holding the token (--nats-token-file)
	User         string // user name (--nats-user), with PasswordFile
	PasswordFile string // file holding User's password (--nats-password-file)
	CredsFile    string // NATS credentials file: user JWT and NKey seed (--nats-creds)
	NKeySeedFile string // file holding an NKey user seed (--nats-nkey)

	TLSCA   string // CA certificates that verify the server; requires TLS (--tls-ca)
	TLSCert string // client certificate (--tls-cert), with TLSKey
	TLSKey  string // its key (--tls-key)

	Name string // connection name shown by the server
}

// Reconnection settings of Connect: a client keeps trying, one server of
// the URL list after another, until it is closed, so that it survives the
// loss and restart of a node.
const (
	connectTimeout = 5 * time.Second
	reconnectWait  = time.Second
	pingInterval   = 10 * time.Second
	maxPingsOut    = 3
)

// Connect connects to the servers of url, one or several URLs separated
// by commas (give every node of a cluster, so that the client reconnects
// to another when one is lost). After a disconnection the client
// reconnects forever, waiting a second between rounds; a dead server is
// noticed within about 30 s of silence (pings every 10 s, 3 unanswered).
// The first connection is not retried: its error names the URLs, with
// any password in them redacted.
func Connect(url string, o ClientOptions) (*nats.Conn, error) {
	opts, err := o.natsOptions()
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", redactURLs(url), err)
	}
	return nc, nil
}

// natsOptions checks o and returns the nats.go options.
func (o ClientOptions) natsOptions() ([]nats.Option, error) {
	opts := []nats.Option{
		nats.Timeout(connectTimeout),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(reconnectWait),
		nats.PingInterval(pingInterval),
		nats.MaxPingsOutstanding(maxPingsOut),
	}
	if o.Name != "" {
		opts = append(opts, nats.Name(o.Name))
	}
	var given []string
	if o.TokenFile != "" {
		given = append(given, "--nats-token-file")
	}
	if o.User != "" || o.PasswordFile != "" {
		if o.User == "" {
			return nil, badOption("--nats-password-file needs --nats-user")
		}
		if o.PasswordFile == "" {
			return nil, badOption("--nats-user needs --nats-password-file")
		}
		given = append(given, "--nats-user")
	}
	if o.CredsFile != "" {
		given = append(given, "--nats-creds")
	}
	if o.NKeySeedFile != "" {
		given = append(given, "--nats-nkey")
	}
	if len(given) > 1 {
		return nil, badOption("%s: give one authentication method", strings.Join(given, " and "))
	}
	switch {
	case o.TokenFile != "":
		tok, err := readSecret("--nats-token-file", o.TokenFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.Token(tok))
	case o.User != "":
		pass, err := readSecret("--nats-password-file", o.PasswordFile)
		if err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserInfo(o.User, pass))
	case o.CredsFile != "":
		if _, err := readSmall("--nats-creds", o.CredsFile); err != nil {
			return nil, err
		}
		opts = append(opts, nats.UserCredentials(o.CredsFile))
	case o.NKeySeedFile != "":
		if _, err := readSmall("--nats-nkey", o.NKeySeedFile); err != nil {
			return nil, err
		}
		opt, err := nats.NkeyOptionFromSeed(o.NKeySeedFile)
		if err != nil {
			// nats.go's message names the problem, not the seed.
			return nil, badOption("--nats-nkey %s: %v", o.NKeySeedFile, err)
		}
		opts = append(opts, opt)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, badOption("--tls-cert and --tls-key go together: give both or neither")
	}
	if o.TLSCA != "" {
		opts = append(opts, nats.RootCAs(o.TLSCA))
	}
	if o.TLSCert != "" {
		opts = append(opts, nats.ClientCert(o.TLSCert, o.TLSKey))
	}
	return opts, nil
}

// redactURLs returns the comma-separated URL list s with passwords
// replaced by "xxxxx"; an entry that does not parse is replaced whole.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.Contains(p, "@") {
			parts[i] = p
			continue
		}
		u, err := url.Parse(p)
		if err != nil {
			parts[i] = "(unparsable URL)"
			continue
		}
		if _, ok := u.User.Password(); !ok && u.User != nil {
			// A token given as the user part.
			u.User = url.User("xxxxx")
		}
		parts[i] = u.Redacted()
	}
	return strings.Join(parts, ",")
}
