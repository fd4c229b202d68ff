#!/usr/bin/env bash
# Installs the Debian packages the tests use when they are missing:
# bubblewrap (the sandbox), slirp4netns and passt (pasta: the two helpers
# that connect the network namespace of a network: true sandbox; the tests
# run with each) and qemu-user-static (the suite under emulation,
# ci/test-qemu.sh), and gcc (cgo, which the race detector of `make test`
# needs), zsh and fish (the CLI's completion scripts are loaded in each;
# about 5 and 3 MB to download). Without root or sudo it says what to
# install and the tests that need them skip with a reason.
set -uo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
command -v slirp4netns >/dev/null 2>&1 || need+=(slirp4netns)
command -v pasta >/dev/null 2>&1 || need+=(passt)
command -v "${CC:-gcc}" >/dev/null 2>&1 || need+=(gcc)
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
{ command -v qemu-aarch64-static && command -v qemu-arm-static; } >/dev/null 2>&1 || need+=(qemu-user-static)
[ ${#need[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; else
    echo "deps: missing ${need[*]}; install with: sudo apt-get install ${need[*]} (tests that need them will skip)" >&2
    exit 0
  fi
fi
echo "deps: installing ${need[*]}" >&2
$sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2 ||
  echo "deps: could not install ${need[*]}; tests that need them will skip" >&2
exit 0
