package natsd

import (
	"flag"
	"strconv"
	"strings"
)

// AddServerFlags defines the flags of a node on fs and returns the
// options they fill: --listen, --store, --name, --cluster, --cluster-name,
// --routes, --max-payload, the authentication flags --nats-token-file,
// --nats-user, --nats-password-file, --nats-nkey-users and the TLS flags
// --tls-cert, --tls-key, --tls-ca. Log and Verbose are left to the caller.
func AddServerFlags(fs *flag.FlagSet) *ServerOptions {
	o := &ServerOptions{}
	fs.StringVar(&o.Listen, "listen", DefaultListen, "client `HOST:PORT` (port 0: any free port); a host that is not loopback needs authentication")
	fs.StringVar(&o.StoreDir, "store", "", "JetStream storage `DIR`")
	fs.StringVar(&o.Name, "name", "", "server `NAME`, unique in the cluster (default HOSTNAME-PORT)")
	fs.StringVar(&o.ClusterListen, "cluster", "", "route `HOST:PORT` other nodes connect to (default: not clustered)")
	fs.StringVar(&o.ClusterName, "cluster-name", DefaultClusterName, "cluster `NAME`, the same on every node")
	fs.Func("routes", "comma-separated route `URLs` of the other nodes, nats-route://HOST:PORT (a node may list itself)", func(s string) error {
		for _, r := range strings.Split(s, ",") {
			if r = strings.TrimSpace(r); r != "" {
				o.Routes = append(o.Routes, r)
			}
		}
		return nil
	})
	fs.Func("max-payload", "largest message in `BYTES` (default 8 MiB, at most 64 MiB)", func(s string) error {
		n, err := parseInt32(s)
		o.MaxPayload = n
		return err
	})
	fs.StringVar(&o.TokenFile, "nats-token-file", "", "clients authenticate with the token on the first line of `FILE` (routes too, as user \"cpm\")")
	fs.StringVar(&o.User, "nats-user", "", "clients authenticate as user `NAME` with --nats-password-file (routes too)")
	fs.StringVar(&o.PasswordFile, "nats-password-file", "", "the password of --nats-user, first line of `FILE`")
	fs.StringVar(&o.NKeysFile, "nats-nkey-users", "", "clients authenticate with the NKeys whose public user keys `FILE` lists, one a line")
	addTLSFlags(fs, &o.TLSCert, &o.TLSKey, &o.TLSCA,
		"the node's TLS certificate `FILE` (clients connect with TLS)",
		"the key `FILE` of --tls-cert",
		"CA certificate `FILE`: clients must present a certificate it signed; routes use mutual TLS")
	return o
}

// AddClientFlags defines the connection flags of a client on fs and
// returns the options they fill: --nats-token-file, --nats-user,
// --nats-password-file, --nats-creds, --nats-nkey, --tls-ca, --tls-cert,
// --tls-key. Name is left to the caller.
func AddClientFlags(fs *flag.FlagSet) *ClientOptions {
	o := &ClientOptions{}
	fs.StringVar(&o.TokenFile, "nats-token-file", "", "authenticate to NATS with the token on the first line of `FILE`")
	fs.StringVar(&o.User, "nats-user", "", "authenticate to NATS as user `NAME` with --nats-password-file")
	fs.StringVar(&o.PasswordFile, "nats-password-file", "", "the password of --nats-user, first line of `FILE`")
	fs.StringVar(&o.CredsFile, "nats-creds", "", "authenticate to NATS with the credentials `FILE` (user JWT and NKey seed)")
	fs.StringVar(&o.NKeySeedFile, "nats-nkey", "", "authenticate to NATS with the NKey user seed in `FILE`")
	addTLSFlags(fs, &o.TLSCert, &o.TLSKey, &o.TLSCA,
		"client TLS certificate `FILE`, for a server that requires one",
		"the key `FILE` of --tls-cert",
		"CA certificate `FILE` that verifies the NATS server (connect with TLS)")
	return o
}

func addTLSFlags(fs *flag.FlagSet, cert, key, ca *string, certUsage, keyUsage, caUsage string) {
	fs.StringVar(cert, "tls-cert", "", certUsage)
	fs.StringVar(key, "tls-key", "", keyUsage)
	fs.StringVar(ca, "tls-ca", "", caUsage)
}

func parseInt32(s string) (int32, error) {
	n, err := strconv.ParseInt(s, 0, 32)
	return int32(n), err
}
