package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/polyhedral/cpm/cluster/natsd"
)

const clusterUsage = `usage:
  cpm cluster serve [--listen HOST:PORT] [--store DIR] [--cluster HOST:PORT --routes URL,...]
                    [--name N] [authentication and TLS flags]
                                 a NATS server with JetStream, until interrupted
  cpm cluster status --nats URL  jobs, their tasks by state, workers and their tasks
  cpm cluster gc --nats URL [--older-than DURATION] [--job ID ...] [--force] [--dry-run]
                                 delete old finished jobs (results, records) and unused data

Run "cpm cluster serve -h", "cpm cluster status -h" or "cpm cluster gc -h" for flags.
`

// clusterStatus implements cpm cluster status; the file that defines it
// sets it.
var clusterStatus func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// runCluster dispatches the subcommands of cpm cluster.
func runCluster(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, clusterUsage)
		return usagef("missing subcommand: serve, status or gc")
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "serve":
		return runClusterServe(ctx, rest, stdout, stderr)
	case "status":
		if clusterStatus == nil {
			return errors.New("cluster status: not available in this build")
		}
		return clusterStatus(ctx, rest, stdout, stderr)
	case "gc":
		return runClusterGC(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, clusterUsage)
		return nil
	default:
		return usagef("unknown subcommand %q: want serve, status or gc", sub)
	}
}

const clusterServeUsage = `cpm cluster serve [--listen HOST:PORT] [--store DIR] [--cluster HOST:PORT --routes URL,...] [--name N] [flags]

Runs a NATS server with JetStream until interrupted (SIGINT, SIGTERM), then
shuts it down cleanly. It clusters with other cpm cluster serve processes
and with stock nats-server nodes: give each node --cluster, the same
--cluster-name and --routes listing the nodes (a node may list itself).

A --listen or --cluster host that is not loopback needs authentication:
--nats-token-file, --nats-user with --nats-password-file, --nats-nkey-users,
or --tls-cert, --tls-key and --tls-ca (client certificates). Routes then
require the same token or password (user "cpm" for a token) or, with
--tls-ca, mutual TLS. Without --store the JetStream data is kept in a new
temporary directory, removed at exit.`

// runClusterServe implements cpm cluster serve.
func runClusterServe(ctx context.Context, args []string, _, stderr io.Writer) error {
	stderr = &lockedWriter{w: stderr}
	fs := newFlags("cluster serve", stderr, clusterServeUsage)
	o := natsd.AddServerFlags(fs)
	fs.Lookup("store").Usage = "JetStream storage `DIR` (default: a new temporary directory, removed at exit)"
	verbose := fs.Bool("v", false, "also log the server's notices (connections, routes, leaders)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	check := *o
	if check.StoreDir == "" {
		check.StoreDir = os.TempDir()
	}
	if err := check.Validate(); err != nil {
		return serveError(err)
	}
	if o.StoreDir == "" {
		dir, err := os.MkdirTemp("", "cpm-nats-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.StoreDir = dir
		fmt.Fprintf(stderr, "cpm cluster serve: no --store: JetStream data goes to %s and is lost at exit\n", dir)
	}
	o.Log, o.Verbose = stderr, *verbose
	s, err := natsd.Start(*o)
	if err != nil {
		return serveError(err)
	}
	fmt.Fprintf(stderr, "cpm cluster serve: %s listening on %s (%s)\n", s.Name(), s.ClientURL(), serveDetails(s, o))
	select {
	case <-ctx.Done():
	case <-s.Done():
		return fmt.Errorf("NATS server %s stopped", s.Name())
	}
	s.Shutdown()
	fmt.Fprintf(stderr, "cpm cluster serve: %s stopped\n", s.Name())
	return nil
}

// serveDetails describes the node's store and cluster for its status line.
func serveDetails(s *natsd.Server, o *natsd.ServerOptions) string {
	d := "JetStream store " + o.StoreDir
	if s.RouteURL() != "" {
		d += ", cluster " + o.ClusterName + " on " + s.RouteURL() + ", routes " + strings.Join(s.Routes(), ",")
	}
	return d
}

// serveError maps a configuration error of the node to a usage error.
func serveError(err error) error {
	if errors.Is(err, natsd.ErrOptions) || errors.Is(err, natsd.ErrInsecure) {
		return usageError{err}
	}
	return err
}

// lockedWriter serializes the writes of the command and the server's log.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
