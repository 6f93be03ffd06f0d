#!/usr/bin/env bash
# Install what libsandbox0's core build needs on a Debian/Ubuntu machine, only
# if missing. Idempotent; works as root or through sudo. Sourced by
# scripts/demo and scripts/test (it can also be run alone). Test parts in
# scripts/test.d/ install their own extras.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S0_APT_PACKAGES=(build-essential pkg-config meson ninja-build check
  libcurl4-openssl-dev libcjson-dev libsodium-dev libzstd-dev libsqlite3-dev
  libext2fs-dev e2fsprogs libmicrohttpd-dev libarchive-dev libfuse3-dev fuse3 libwslay-dev
  libnl-route-3-dev libnftables-dev
  libgnutls28-dev libhttp-parser-dev libyaml-dev python3 python3-dev swig libpq-dev libxml2-dev)

s0_install_deps() { s0_apt_install "${S0_APT_PACKAGES[@]}"; }

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  s0_install_deps
fi
