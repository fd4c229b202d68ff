#!/usr/bin/env bash
# Prints the path of a Go toolchain new enough for go.mod, installing one
# when there is none: Debian's golang-go bootstraps, and the toolchain the
# module needs comes from the Go module proxy as the module
# golang.org/toolchain (the same way GOTOOLCHAIN=auto fetches it).
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(awk '/^go [0-9]/{print $2; exit}' go.mod)

newer_or_equal() { # $1 >= $2, dotted versions
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

for cand in go /usr/local/go/bin/go "$HOME/.cache/agnx-lite/go/bin/go"; do
  if command -v "$cand" >/dev/null 2>&1; then
    v=$("$cand" env GOVERSION 2>/dev/null | sed 's/^go//') || continue
    if newer_or_equal "${v%%-*}" "$want"; then
      command -v "$cand"
      exit 0
    fi
  fi
done

echo "ensure-go: no Go >= $want found; installing one" >&2
if ! command -v go >/dev/null 2>&1; then
  apt-get update >&2 && apt-get install -y golang-go >&2
fi
case "$(uname -m)" in
  x86_64) arch=amd64 ;; aarch64) arch=arm64 ;; armv6l|armv7l) arch=armv6l ;; riscv64) arch=riscv64 ;;
  *) echo "ensure-go: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac
ver="go${want}"
case "$want" in *.*.*) ;; *) ver="go${want}.0" ;; esac
mod="golang.org/toolchain@v0.0.1-${ver}.linux-${arch}"
tmp=$(mktemp -d)
dir=$(cd "$tmp" && GO111MODULE=on GOFLAGS= go mod download -json "$mod" | awk -F'"' '/"Dir"/{print $4}')
rm -rf "$tmp"
[ -f "$dir/bin/go" ] || { echo "ensure-go: could not fetch $mod" >&2; exit 1; }
mkdir -p "$HOME/.cache/agnx-lite"
rm -rf "$HOME/.cache/agnx-lite/go"
cp -r "$dir" "$HOME/.cache/agnx-lite/go"
chmod -R u+w "$HOME/.cache/agnx-lite/go"
# Module zips keep no modes: make the toolchain's programs executable.
chmod +x "$HOME/.cache/agnx-lite/go/bin/"* "$HOME/.cache/agnx-lite/go/pkg/tool/"*/*
"$HOME/.cache/agnx-lite/go/bin/go" version >&2
echo "$HOME/.cache/agnx-lite/go/bin/go"
