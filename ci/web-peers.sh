#!/usr/bin/env bash
# Installs what the web UI's browser tests (lite/webui/e2e) need: Debian's
# chromium with apt-get when /usr/bin/chromium is missing, and
# playwright-core, pinned by lite/webui/e2e/package-lock.json (1.61, the
# last that runs on Node 18, which Debian 12 ships: 1.62 on refuses
# it), with npm ci
# into lite/webui/e2e/node_modules (git-ignored). Without apt-get, node or
# npm, or offline, it says so and the browser tests skip with a reason
# (under CI=true they fail instead).
set -uo pipefail
# ci: under CI (CI=true) what could not be installed fails the run.
ci() { [ "${CI:-}" = true ] && exit 1; exit 0; }
root="$(cd "$(dirname "$0")/.." && pwd)"
e2e="$root/lite/webui/e2e"
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "web-peers: installing Debian's chromium" >&2
    { apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y --no-install-recommends chromium >/dev/null 2>&1; }; } ||
      { echo "web-peers: apt-get could not install chromium; the browser tests will skip" >&2; ci; }
  else
    echo "web-peers: /usr/bin/chromium is missing and apt-get cannot run as root here (sudo apt-get install chromium); the browser tests will skip" >&2
    ci
  fi
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "web-peers: node and npm are not installed (sudo apt-get install nodejs npm); the browser tests will skip" >&2
  ci
fi
want="$(sed -n 's/.*"playwright-core": "\([0-9.]*\)".*/\1/p' "$e2e/package.json")"
grep -qs "\"version\": \"$want\"" "$e2e/node_modules/playwright-core/package.json" && exit 0
echo "web-peers: installing playwright-core@$want into $e2e/node_modules" >&2
(cd "$e2e" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
  { echo "web-peers: npm could not install playwright-core; the browser tests will skip" >&2; ci; }
exit 0
