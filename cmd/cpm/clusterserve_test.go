package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/polyhedral/cpm/cluster/natsd"
)

// cpm cluster serve on port 0 prints the port it listens on, serves
// JetStream there, and on cancellation shuts down, removes its temporary
// store and exits 0.
func TestClusterServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := newSyncBuffer(""), newSyncBuffer("")
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"cluster", "serve", "--listen", "127.0.0.1:0", "--name", "t1"}, stdout, stderr)
	}()

	line := regexp.MustCompile(`cpm cluster serve: t1 listening on (nats://127\.0\.0\.1:([0-9]+)) \(JetStream store (\S+)\)\n`)
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(10 * time.Millisecond) {
		select {
		case c := <-code:
			t.Fatalf("cpm cluster serve exited %d before serving:\n%s", c, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status line after 10 s:\n%s", stderr.String())
		}
		m = line.FindStringSubmatch(stderr.String())
	}
	if m[2] == "0" {
		t.Fatalf("status line shows port 0: %s", m[0])
	}
	if !strings.Contains(stderr.String(), "no --store: JetStream data goes to "+m[3]+" and is lost at exit") {
		t.Errorf("no warning about the temporary store:\n%s", stderr.String())
	}
	nc, err := natsd.Connect(m[1], natsd.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.RTT(); err != nil {
		t.Fatal(err)
	}
	nc.Close()

	cancel()
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("exit %d after cancellation, want 0:\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cpm cluster serve still running 10 s after cancellation")
	}
	if !strings.Contains(stderr.String(), "cpm cluster serve: t1 stopped\n") {
		t.Errorf("no stop line:\n%s", stderr.String())
	}
	if _, err := os.Stat(m[3]); !os.IsNotExist(err) {
		t.Errorf("temporary store %s left behind (%v)", m[3], err)
	}
	if stdout.String() != "" {
		t.Errorf("stdout: %q", stdout.String())
	}
}

func TestClusterServeUsage(t *testing.T) {
	store := t.TempDir()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"cluster", "serve", "--listen", "0.0.0.0:0"}, []string{"--listen 0.0.0.0:0", "--nats-token-file", "--nats-user", "--tls-ca"}},
		{[]string{"cluster", "serve", "--listen", ":0", "--store", store}, []string{"--nats-token-file"}},
		{[]string{"cluster", "serve", "--cluster", "0.0.0.0:0", "--routes", "127.0.0.1:1", "--store", store}, []string{"--cluster 0.0.0.0:0", "--nats-token-file"}},
		{[]string{"cluster", "serve", "--tls-cert", "x.pem"}, []string{"--tls-key"}},
		{[]string{"cluster", "serve", "stray"}, []string{"unexpected argument"}},
		{[]string{"cluster"}, []string{"missing subcommand"}},
		{[]string{"cluster", "launch"}, []string{`unknown subcommand "launch"`}},
	} {
		code, _, errs := cpm(t, c.args...)
		if code != exitUsage {
			t.Errorf("cpm %s: exit %d, want %d\n%s", strings.Join(c.args, " "), code, exitUsage, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("cpm %s: stderr lacks %q:\n%s", strings.Join(c.args, " "), w, errs)
			}
		}
	}
	if code, out, _ := cpm(t, "cluster", "serve", "-h"); code != exitOK {
		t.Errorf("cpm cluster serve -h: exit %d\n%s", code, out)
	}
}
