package natsd

import (
	"errors"
	"io/fs"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/nats-io/nkeys"
)

// An address that is not loopback is refused without authentication, by
// the check of the options, and accepted with any method.
func TestValidateLoopbackRule(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "tok-123\n")
	pass := writeFile(t, dir, "pass", "pw-456\n")
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	nk := writeFile(t, dir, "nkeys", "# users\n"+pub+"\n")
	p := newPKI(t)
	store := t.TempDir()

	refused := []struct {
		name string
		o    ServerOptions
		want string // in the message
	}{
		{"all IPv4", ServerOptions{Listen: "0.0.0.0:4222"}, "--nats-token-file"},
		{"empty host", ServerOptions{Listen: ":4222"}, "--nats-user"},
		{"all IPv6", ServerOptions{Listen: "[::]:4222"}, "--nats-nkey-users"},
		{"private IP", ServerOptions{Listen: "10.1.2.3:4222"}, "--tls-ca"},
		{"name", ServerOptions{Listen: "node1.example.com:4222"}, "127.0.0.1"},
		{"TLS without CA", ServerOptions{Listen: "0.0.0.0:4222", TLSCert: p.Cert, TLSKey: p.Key}, "--listen 0.0.0.0:4222"},
		{"cluster", ServerOptions{ClusterListen: "0.0.0.0:6222"}, "--cluster 0.0.0.0:6222"},
		{"cluster with nkeys", ServerOptions{Listen: "0.0.0.0:4222", NKeysFile: nk, ClusterListen: "0.0.0.0:6222"}, "NKeys do not protect routes"},
	}
	for _, c := range refused {
		t.Run("refused/"+c.name, func(t *testing.T) {
			c.o.StoreDir = store
			if c.o.ClusterListen != "" {
				c.o.Routes = []string{"127.0.0.1:6223"}
			}
			err := c.o.Validate()
			if !errors.Is(err, ErrInsecure) {
				t.Fatalf("Validate = %v, want ErrInsecure", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}

	accepted := []struct {
		name string
		o    ServerOptions
	}{
		{"default", ServerOptions{}},
		{"127/8", ServerOptions{Listen: "127.9.9.9:4222", ClusterListen: "127.0.0.1:6222", Routes: []string{"127.0.0.1:6223"}}},
		{"localhost", ServerOptions{Listen: "localhost:4222", ClusterListen: "LOCALHOST:6222", Routes: []string{"localhost:6223"}}},
		{"::1", ServerOptions{Listen: "[::1]:4222"}},
		{"token", ServerOptions{Listen: "0.0.0.0:4222", TokenFile: token, ClusterListen: ":6222"}},
		{"user", ServerOptions{Listen: "10.1.2.3:4222", User: "u", PasswordFile: pass, ClusterListen: "10.1.2.3:6222"}},
		{"nkeys, loopback cluster", ServerOptions{Listen: "0.0.0.0:4222", NKeysFile: nk, ClusterListen: "127.0.0.1:6222"}},
		{"nkeys and mutual TLS", ServerOptions{Listen: "0.0.0.0:4222", NKeysFile: nk, ClusterListen: "0.0.0.0:6222", TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA}},
		{"mutual TLS", ServerOptions{Listen: "0.0.0.0:4222", ClusterListen: "0.0.0.0:6222", TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA}},
	}
	for _, c := range accepted {
		t.Run("accepted/"+c.name, func(t *testing.T) {
			c.o.StoreDir = store
			if c.o.ClusterListen != "" && c.o.Routes == nil {
				c.o.Routes = []string{"127.0.0.1:6223"}
			}
			if err := c.o.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

// Start refuses before anything listens: the port stays free.
func TestStartRefusesBeforeListening(t *testing.T) {
	port := freePorts(t, 1)[0]
	addr := net.JoinHostPort("0.0.0.0", strconv.Itoa(port))
	s, err := Start(ServerOptions{Listen: addr, StoreDir: t.TempDir()})
	if !errors.Is(err, ErrInsecure) || s != nil {
		t.Fatalf("Start(%s) = %v, %v; want ErrInsecure", addr, s, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port taken after a refused Start: %v", err)
	}
	l.Close()
}

func TestValidateOptions(t *testing.T) {
	dir := t.TempDir()
	const secret = "s3cret-value"
	token := writeFile(t, dir, "token", secret+"\n")
	empty := writeFile(t, dir, "empty", "")
	blankFirst := writeFile(t, dir, "blank-first", "  \n"+secret+"\n")
	badKeys := writeFile(t, dir, "bad-nkeys", "SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4\n")
	noKeys := writeFile(t, dir, "no-nkeys", "# nobody\n\n")
	p := newPKI(t)
	store := t.TempDir()

	cases := []struct {
		name string
		o    ServerOptions
		kind error  // ErrOptions or a *fs.PathError (nil)
		want string // in the message
	}{
		{"no store", ServerOptions{StoreDir: "-"}, ErrOptions, "--store"},
		{"bad listen", ServerOptions{Listen: "127.0.0.1"}, ErrOptions, "--listen"},
		{"bad port", ServerOptions{Listen: "127.0.0.1:99999"}, ErrOptions, "--listen"},
		{"bad cluster", ServerOptions{ClusterListen: "x"}, ErrOptions, "--cluster"},
		{"cluster without routes", ServerOptions{ClusterListen: "127.0.0.1:0"}, ErrOptions, "--cluster needs --routes"},
		{"routes without cluster", ServerOptions{Routes: []string{"127.0.0.1:6222"}}, ErrOptions, "--routes needs --cluster"},
		{"route scheme", ServerOptions{ClusterListen: "127.0.0.1:0", Routes: []string{"http://u:" + secret + "@127.0.0.1:6222"}}, ErrOptions, "scheme"},
		{"route port", ServerOptions{ClusterListen: "127.0.0.1:0", Routes: []string{"nats-route://127.0.0.1"}}, ErrOptions, "--routes"},
		{"two methods", ServerOptions{TokenFile: token, User: "u", PasswordFile: token}, ErrOptions, "--nats-token-file and --nats-user"},
		{"user without password", ServerOptions{User: "u"}, ErrOptions, "--nats-password-file"},
		{"password without user", ServerOptions{PasswordFile: token}, ErrOptions, "--nats-user"},
		{"cert without key", ServerOptions{TLSCert: p.Cert}, ErrOptions, "--tls-key"},
		{"key without cert", ServerOptions{TLSKey: p.Key}, ErrOptions, "--tls-cert"},
		{"CA without cert", ServerOptions{TLSCA: p.CA}, ErrOptions, "--tls-ca"},
		{"name with space", ServerOptions{Name: "a b"}, ErrOptions, "--name"},
		{"max payload", ServerOptions{MaxPayload: 128 << 20}, ErrOptions, "--max-payload"},
		{"empty token file", ServerOptions{TokenFile: empty}, ErrOptions, empty},
		{"blank first line", ServerOptions{TokenFile: blankFirst}, ErrOptions, blankFirst},
		{"missing token file", ServerOptions{TokenFile: dir + "/none"}, nil, dir + "/none"},
		{"unreadable password file", ServerOptions{User: "u", PasswordFile: dir}, nil, "--nats-password-file"},
		{"seed as nkey user", ServerOptions{NKeysFile: badKeys}, ErrOptions, badKeys + ":1"},
		{"no nkey users", ServerOptions{NKeysFile: noKeys}, ErrOptions, noKeys},
		{"missing cert", ServerOptions{TLSCert: dir + "/none.pem", TLSKey: p.Key}, nil, "--tls-cert"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.o.StoreDir == "" {
				c.o.StoreDir = store
			} else if c.o.StoreDir == "-" {
				c.o.StoreDir = ""
			}
			err := c.o.Validate()
			switch {
			case err == nil:
				t.Fatal("Validate accepted the options")
			case c.kind != nil && !errors.Is(err, c.kind):
				t.Errorf("Validate = %v, want %v", err, c.kind)
			case c.kind == nil && (errors.Is(err, ErrOptions) || errors.Is(err, ErrInsecure)):
				t.Errorf("Validate = %v, want an I/O error", err)
			}
			if c.kind == nil && strings.Contains(c.name, "file") && !errors.As(err, new(*fs.PathError)) {
				t.Errorf("Validate = %v, want a *fs.PathError", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "SUAIBDP") {
				t.Errorf("error %q shows a secret", err)
			}
		})
	}
}

// Routes get the node's credentials: the user and password, or user "cpm"
// and the token; a route that has its own keeps them.
func TestRouteCredentials(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "tok-123\n")
	c, err := ServerOptions{
		StoreDir:      t.TempDir(),
		TokenFile:     token,
		ClusterListen: "127.0.0.1:0",
		Routes:        []string{"127.0.0.1:6222", "nats-route://a:b@127.0.0.1:6223", "nats://localhost:6224"},
	}.build()
	if err != nil {
		t.Fatal(err)
	}
	cl := c.opts.Cluster
	if cl.Username != "cpm" || cl.Password != "tok-123" || cl.Name != "cpm" || cl.Port != -1 {
		t.Errorf("cluster options %+v", cl)
	}
	want := []string{"nats-route://cpm:tok-123@127.0.0.1:6222", "nats-route://a:b@127.0.0.1:6223", "nats://cpm:tok-123@localhost:6224"}
	for i, u := range c.opts.Routes {
		if u.String() != want[i] {
			t.Errorf("route %d = %s, want %s", i, u, want[i])
		}
	}
	if c.opts.Authorization != "tok-123" || c.opts.Port != 4222 || c.opts.MaxPayload != 8<<20 || !c.opts.JetStream || !c.opts.NoSigs {
		t.Errorf("server options: Authorization set %v, Port %d, MaxPayload %d, JetStream %v, NoSigs %v", c.opts.Authorization != "", c.opts.Port, c.opts.MaxPayload, c.opts.JetStream, c.opts.NoSigs)
	}
}

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                     "nats://127.0.0.1:4222",
		"nats://u:pw@h:1, nats://h:2":               "nats://u:xxxxx@h:1,nats://h:2",
		"nats://tok@h:1":                            "nats://xxxxx@h:1",
		"nats://a:b@h:1,tls://c:d@h:2,nats://e@h:3": "nats://a:xxxxx@h:1,tls://c:xxxxx@h:2,nats://xxxxx@h:3",
	} {
		if got := redactURLs(in); got != want {
			t.Errorf("redactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}
