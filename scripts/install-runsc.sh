#!/usr/bin/env bash
# Install the pinned, static runsc (gVisor) the `gvisor` runtime uses, plus
# the packages that runtime needs (busybox-static for the template tree,
# fuse3 for the carrier). Built once from the Go module proxy into a cache
# outside the clone; nothing is downloaded from anywhere else. Idempotent:
# a second run finds the binary and its version record and returns.
#
#   scripts/install-runsc.sh            # as root (or through sudo for apt)
#   S0_RUNSC_CACHE=/some/dir scripts/install-runsc.sh
#
# Result: $S0_RUNSC_CACHE/<version>/runsc (default
# /var/cache/libsandbox0/runsc/go-20260905-160fafc42237/runsc) and a file
# VERSION beside it holding `runsc --version`'s first line. The gvisor
# driver looks there when S0_RUNSC is not set (docs/local-backend.md).
#
# Why these flags (docs/local-backend.md "Runtime gvisor"): the module has
# no tags, the "go" branch pseudo-version is pinned; CGO_ENABLED=0 because a
# cgo build dies at sandbox boot (it re-execs itself in an empty chroot
# without ld.so); -ldflags sets the version, else it reads VERSION_MISSING.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S0_RUNSC_MODULE_VERSION=v0.0.0-20260905035102-160fafc42237
S0_RUNSC_VERSION=go-20260905-160fafc42237
S0_RUNSC_CACHE=${S0_RUNSC_CACHE:-/var/cache/libsandbox0/runsc}

# apt's lock may be held by another install: wait for it (never kill it).
s0_apt_install_wait() {
  local i
  for i in $(seq 1 60); do
    s0_apt_install "$@" && return 0
    sleep 5
  done
  return 1
}

s0_install_runsc() {
  local dir="$S0_RUNSC_CACHE/$S0_RUNSC_VERSION" go
  s0_apt_install_wait busybox-static fuse3 libfuse3-dev e2fsprogs || return 1
  if [ -x "$dir/runsc" ] && [ -s "$dir/VERSION" ]; then
    return 0
  fi
  go=$(command -v go || ls /usr/lib/go-1.2[3-9]/bin/go 2>/dev/null | tail -1) || true
  if [ -z "$go" ]; then
    # Go >= 1.23 from bookworm-backports (the same route as part "go").
    . "$(dirname "${BASH_SOURCE[0]}")/test.d/40-go.sh"
    deps || return 1
    go=$(s0_go_cmd) || { echo "install-runsc: no go command" >&2; return 1; }
  fi
  mkdir -p "$dir/build"
  echo "==> building runsc $S0_RUNSC_VERSION (static, ~1-1.5 min on 2 cores) into $dir"
  (
    export GOBIN="$dir/build/bin" GOPATH="$dir/build/gopath" GOCACHE="$dir/build/gocache" \
      GOMODCACHE="$dir/build/gomodcache" GOTOOLCHAIN=local GOTELEMETRY=off GOFLAGS=-modcacherw \
      CGO_ENABLED=0
    nice "$go" install -ldflags "-X gvisor.dev/gvisor/runsc/version.version=$S0_RUNSC_VERSION" \
      "gvisor.dev/gvisor/runsc@$S0_RUNSC_MODULE_VERSION"
  ) || { echo "install-runsc: go install failed" >&2; return 1; }
  install -m 0755 "$dir/build/bin/runsc" "$dir/runsc.new"
  "$dir/runsc.new" --version | head -1 > "$dir/VERSION.new"
  grep -q "$S0_RUNSC_VERSION" "$dir/VERSION.new" ||
    { echo "install-runsc: unexpected version: $(cat "$dir/VERSION.new")" >&2; return 1; }
  mv "$dir/runsc.new" "$dir/runsc"
  mv "$dir/VERSION.new" "$dir/VERSION"
  # the build and module caches are only needed to build: drop them (~1 GB)
  rm -rf "$dir/build"
  echo "==> $(cat "$dir/VERSION") at $dir/runsc"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  s0_install_runsc
fi
