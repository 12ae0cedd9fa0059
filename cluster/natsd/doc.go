// Package natsd runs the NATS server that carries cpm's distributed jobs,
// embedded in the cpm process (cpm cluster serve, --nats embedded), and
// connects clients to it or to any stock nats-server.
//
// A node is a real NATS server with JetStream: it clusters with other cpm
// nodes and with stock nats-server nodes (same cluster name, routes to each
// other, the same route credentials).
//
// # Security by default
//
// Start refuses to listen on an address that is not a loopback address
// (127.0.0.0/8, ::1, "localhost"; an empty host, 0.0.0.0 and :: listen on
// every interface and count as not loopback) unless clients must
// authenticate: with a token (TokenFile), a user and password (User,
// PasswordFile), NKeys (NKeysFile), or a client certificate signed by
// TLSCA (mutual TLS). The refusal is an error wrapping ErrInsecure that
// names the flags of AddServerFlags to add; it happens before anything
// listens.
//
// Routes (the cluster port) are protected as follows:
//
//   - With a token or a user and password, routes require the same
//     secret: user User and password PasswordFile's, or user "cpm" and the
//     token as password. Start adds these credentials to every route URL
//     that has none, so cpm nodes sharing a secret route to each other; a
//     stock nats-server node needs cluster { authorization { user: ...,
//     password: ... } } and the credentials in its route URLs.
//   - With TLSCA, routes use mutual TLS with the node's certificate,
//     verified against TLSCA both ways (a route URL's host must then match
//     the certificate).
//   - With NKeys alone there is no route secret: a cluster address that is
//     not loopback then needs TLSCA (mutual TLS on routes), else ErrInsecure.
//
// Without TLS a secret crosses the network in plain text: Start logs a
// warning when a non-loopback address is served without TLS. Secrets are
// read from files (first line, trimmed) and never appear in logs or
// errors.
package natsd
