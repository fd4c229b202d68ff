// Package webaddr reads the entries of the HTTP server's edge lists in
// agnx.yaml (server.allowed_hosts, server.allowed_origins and
// server.trusted_proxies) into the normal form the server compares
// requests with. Config validation and the HTTP API both use it, so that a
// value the config accepts is one the server matches.
//
// It imports only the standard library.
package webaddr
