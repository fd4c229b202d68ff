// Package e2e holds the web UI's browser tests: web_test.go builds the
// daemon from the tree, starts it with a fresh data dir and a fake model,
// and runs web.test.mjs, which drives Debian's headless Chromium with
// playwright-core (installed by ci/web-peers.sh). It has no code of its own.
package e2e
