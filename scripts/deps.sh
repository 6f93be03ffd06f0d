#!/usr/bin/env bash
# Install what libsandbox0 needs on a Debian/Ubuntu machine, only if missing.
# Idempotent; works as root or through sudo. Sourced by scripts/demo and
# scripts/test (not meant to be run alone, but it can be).
set -euo pipefail

S0_APT_PACKAGES=(build-essential pkg-config meson ninja-build check
  libcurl4-openssl-dev libcjson-dev libsodium-dev libzstd-dev libsqlite3-dev
  libext2fs-dev e2fsprogs libmicrohttpd-dev libyaml-dev python3 python3-dev swig)

s0_missing_packages() {
  local p missing=()
  for p in "${S0_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

s0_install_deps() {
  local missing
  missing=$(s0_missing_packages)
  [ -z "$missing" ] && return 0
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "need root or sudo to install: $missing" >&2; return 1; }
    sudo="sudo"
  fi
  echo "==> installing: $missing"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  # shellcheck disable=SC2086
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
}

# Configure (once) and build a meson tree: s0_build DIR [meson options…]
s0_build() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" --wrap-mode=nofallback "$@"
  fi
  ninja -C "$dir"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  s0_install_deps
fi
