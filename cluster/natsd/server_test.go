package natsd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// roundTrip creates stream name (replicas copies), publishes one message
// and reads it back, retrying for up to wait while a cluster elects its
// leaders.
func roundTrip(t *testing.T, nc *nats.Conn, name string, replicas int, wait time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	subject := strings.ToLower(name) + ".msg"
	var last error
	for {
		last = func() error {
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			defer ccancel()
			st, err := js.CreateOrUpdateStream(cctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}, Replicas: replicas})
			if err != nil {
				return fmt.Errorf("create stream: %w", err)
			}
			ack, err := js.Publish(cctx, subject, []byte("hello "+name))
			if err != nil {
				return fmt.Errorf("publish: %w", err)
			}
			m, err := st.GetMsg(cctx, ack.Sequence)
			if err != nil {
				return fmt.Errorf("get message %d: %w", ack.Sequence, err)
			}
			if string(m.Data) != "hello "+name {
				t.Fatalf("read %q", m.Data)
			}
			return nil
		}()
		if last == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("stream %s: %v", name, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func connectT(t *testing.T, url string, o ClientOptions) *nats.Conn {
	t.Helper()
	nc, err := Connect(url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// A loopback node with JetStream: a client connects, creates a stream,
// publishes and reads.
func TestStartLoopbackJetStream(t *testing.T) {
	var log syncBuffer
	s := startT(t, ServerOptions{Log: &log, Verbose: true})
	if !strings.HasPrefix(s.ClientURL(), "nats://127.0.0.1:") || strings.HasSuffix(s.ClientURL(), ":0") {
		t.Fatalf("ClientURL = %q", s.ClientURL())
	}
	if s.RouteURL() != "" {
		t.Errorf("RouteURL = %q for a node that is not clustered", s.RouteURL())
	}
	roundTrip(t, connectT(t, s.ClientURL(), ClientOptions{Name: "test"}), "LOOP", 1, 5*time.Second)
	s.Shutdown()
	s.Shutdown() // idempotent
	if !strings.Contains(log.String(), "Server is ready") {
		t.Errorf("verbose log lacks the notices:\n%s", log.String())
	}
}

func TestStartEmbedded(t *testing.T) {
	s, err := StartEmbedded(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	roundTrip(t, connectT(t, s.ClientURL(), ClientOptions{}), "EMB", 1, 5*time.Second)
}

// A busy port is an error of Start, not a wait or a half-started node.
func TestStartPortInUse(t *testing.T) {
	s := startT(t, ServerOptions{})
	_, err := Start(ServerOptions{Listen: strings.TrimPrefix(s.ClientURL(), "nats://"), StoreDir: t.TempDir()})
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("Start on a busy port = %v, want ErrNotReady", err)
	}
}

// Each authentication method: a client without the secret is refused, a
// client with a wrong one too, a client with it connects; no log line or
// error shows a secret.
func TestAuth(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "tok-secret-1\n")
	wrong := writeFile(t, dir, "wrong", "not-it\n")
	pass := writeFile(t, dir, "pass", "pw-secret-2\n")
	kp, _ := nkeys.CreateUser()
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	nkUsers := writeFile(t, dir, "nkeys", pub+"\n")
	seedFile := writeFile(t, dir, "seed", string(seed)+"\n")
	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	otherFile := writeFile(t, dir, "other-seed", string(otherSeed)+"\n")

	cases := []struct {
		name       string
		server     ServerOptions
		good       ClientOptions
		bad        []ClientOptions
		secrets    []string
		errorMatch string
	}{
		{"token", ServerOptions{TokenFile: token}, ClientOptions{TokenFile: token},
			[]ClientOptions{{}, {TokenFile: wrong}}, []string{"tok-secret-1"}, ""},
		{"user", ServerOptions{User: "alice", PasswordFile: pass}, ClientOptions{User: "alice", PasswordFile: pass},
			[]ClientOptions{{}, {User: "alice", PasswordFile: wrong}, {User: "bob", PasswordFile: pass}}, []string{"pw-secret-2"}, ""},
		{"nkeys", ServerOptions{NKeysFile: nkUsers}, ClientOptions{NKeySeedFile: seedFile},
			[]ClientOptions{{}, {NKeySeedFile: otherFile}}, []string{string(seed), string(otherSeed)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var log syncBuffer
			c.server.Log, c.server.Verbose = &log, true
			s := startT(t, c.server)
			var errs []string
			for i, b := range c.bad {
				nc, err := Connect(s.ClientURL(), b)
				if err == nil {
					nc.Close()
					t.Fatalf("client %d without the right secret connected", i)
				}
				if !errors.Is(err, nats.ErrAuthorization) {
					t.Errorf("client %d: %v, want an authorization error", i, err)
				}
				if !strings.Contains(err.Error(), s.ClientURL()) {
					t.Errorf("error %q does not name the URL", err)
				}
				errs = append(errs, err.Error())
			}
			roundTrip(t, connectT(t, s.ClientURL(), c.good), "AUTH", 1, 5*time.Second)
			s.Shutdown()
			all := log.String() + strings.Join(errs, "\n")
			for _, secret := range c.secrets {
				if strings.Contains(all, secret) {
					t.Errorf("a secret appears in the log or an error:\n%s", all)
				}
			}
		})
	}
}

func TestClientOptionErrors(t *testing.T) {
	dir := t.TempDir()
	token := writeFile(t, dir, "token", "tok\n")
	for _, c := range []struct {
		o    ClientOptions
		want string
	}{
		{ClientOptions{TokenFile: token, CredsFile: token}, "--nats-token-file and --nats-creds"},
		{ClientOptions{User: "u"}, "--nats-password-file"},
		{ClientOptions{TLSCert: token}, "--tls-key"},
		{ClientOptions{TokenFile: dir + "/none"}, "--nats-token-file"},
		{ClientOptions{NKeySeedFile: token}, "--nats-nkey"},
	} {
		_, err := Connect("nats://127.0.0.1:1", c.o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Connect(%+v) = %v, want an error naming %s", c.o, err, c.want)
		}
	}
	_, err := Connect("nats://127.0.0.1:1", ClientOptions{TokenFile: dir + "/none"})
	if !errors.As(err, new(*fs.PathError)) {
		t.Errorf("missing token file: %v, want *fs.PathError", err)
	}
	_, err = Connect("nats://u:pw-secret@127.0.0.1:1", ClientOptions{})
	if err == nil || strings.Contains(err.Error(), "pw-secret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Connect to a closed port: %v, want an error naming the URL without its password", err)
	}
}

// TLS: a client with the CA connects over TLS, one without it fails; with
// a CA on the server, a client must also present a certificate it signed.
func TestTLS(t *testing.T) {
	p := newPKI(t)
	t.Run("server TLS", func(t *testing.T) {
		s := startT(t, ServerOptions{TLSCert: p.Cert, TLSKey: p.Key})
		if !strings.HasPrefix(s.ClientURL(), "tls://127.0.0.1:") {
			t.Fatalf("ClientURL = %q", s.ClientURL())
		}
		nc := connectT(t, s.ClientURL(), ClientOptions{TLSCA: p.CA})
		if !nc.TLSRequired() {
			t.Error("connection without TLS")
		}
		if _, err := nc.TLSConnectionState(); err != nil {
			t.Error(err)
		}
		roundTrip(t, nc, "TLS", 1, 5*time.Second)
		plain := "nats://" + strings.TrimPrefix(s.ClientURL(), "tls://")
		for name, o := range map[string]ClientOptions{"no CA": {}, "other CA": {TLSCA: p.OtherCA}} {
			for _, url := range []string{s.ClientURL(), plain} {
				if nc, err := Connect(url, o); err == nil {
					nc.Close()
					t.Errorf("%s: a client with %s connected", url, name)
				}
			}
		}
	})
	t.Run("mutual TLS", func(t *testing.T) {
		s := startT(t, ServerOptions{TLSCert: p.Cert, TLSKey: p.Key, TLSCA: p.CA})
		if nc, err := Connect(s.ClientURL(), ClientOptions{TLSCA: p.CA}); err == nil {
			nc.Close()
			t.Error("a client without a certificate connected")
		}
		if nc, err := Connect(s.ClientURL(), ClientOptions{TLSCA: p.CA, TLSCert: p.Cert, TLSKey: p.Key}); err != nil {
			t.Errorf("a client with the server's own certificate (signed by the CA): %v", err)
		} else {
			nc.Close()
		}
		roundTrip(t, connectT(t, s.ClientURL(), ClientOptions{TLSCA: p.CA, TLSCert: p.ClientCert, TLSKey: p.ClientKey}), "MTLS", 1, 5*time.Second)
	})
}
