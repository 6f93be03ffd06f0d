#!/usr/bin/env bash
# A root tree of a minimal Debian for the gvisor runtime: `debootstrap
# --variant=minbase` of this machine's release (its VERSION_CODENAME) from
# the Debian mirror apt is configured with here, plus python3 and
# python3-pip (their dependencies, no recommends). Built once into DIR (as
# root: debootstrap makes device nodes and chroots); an existing DIR with
# python3 and pip is kept. Nothing is downloaded but Debian packages,
# verified by debootstrap against the archive keyring.
#
#   scripts/debian-tree.sh /var/cache/libsandbox0/trees/debian
#   S0_GVISOR_TEMPLATE=/var/cache/libsandbox0/trees/debian s0 serve --runtime gvisor --data NEW_DIR
#   s0 template build --from-dir /var/cache/libsandbox0/trees/debian --name debian   # any data dir
#
# S0_DEBIAN_MIRROR overrides the mirror. ~250 MB; timings in
# docs/local-backend.md "Runtime gvisor" (a Debian template).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir=${1:?usage: debian-tree.sh DIR}
[ -x "$dir/usr/bin/python3" ] && [ -x "$dir/usr/bin/pip3" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "debian-tree.sh: needs root (debootstrap)" >&2
  exit 1
fi
for i in $(seq 1 60); do # apt's lock may be held by another install: wait
  s0_apt_install debootstrap debian-archive-keyring >/dev/null && break
  [ "$i" = 60 ] && exit 1
  sleep 5
done

suite=$(. /etc/os-release && echo "${VERSION_CODENAME:?}")
# The machine's configured Debian mirror (deb822 sources or sources.list).
mirror=${S0_DEBIAN_MIRROR:-$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' || true
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
      awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) {print $i; break}}' || true
  } 2>/dev/null | grep -v -- '-security' | head -n1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}

tmp="$dir.tmp.$$"
# debootstrap mounts /proc and /sys in the target while it installs: a
# failed run may leave them; unmount before removing anything.
cleanup() {
  awk -v t="$tmp/" 'index($2, t) == 1 {print $2}' /proc/mounts | sort -r |
    while read -r m; do umount -l "$m"; done
  rm -rf "$tmp" "$tmp.log"
}
cleanup
trap cleanup EXIT
mkdir -p "$(dirname "$dir")"
echo "==> debootstrap --variant=minbase $suite from $mirror (python3, python3-pip)"
debootstrap --variant=minbase --include=python3,python3-pip \
  --keyring=/usr/share/keyrings/debian-archive-keyring.gpg "$suite" "$tmp" "$mirror" >"$tmp.log" 2>&1 ||
  { tail -n 20 "$tmp.log" >&2; exit 1; }
rm -f "$tmp.log"
# Downloaded .debs and apt's lists are not part of a template; nor are the
# device nodes debootstrap made in /dev (the runtime mounts its own /dev,
# and a template archive refuses device nodes).
rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*
find "$tmp/dev" -mindepth 1 -delete
mkdir -p "$tmp/workspace"
mv "$tmp" "$dir"
trap - EXIT
echo "==> Debian root tree at $dir ($(du -sh "$dir" | cut -f1))"
