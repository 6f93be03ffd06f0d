#!/usr/bin/env bash
# A root tree for the gvisor runtime with python3: busybox (a link per
# applet) plus the files of this machine's installed Debian packages for
# python3 (python3-minimal, python3.11-minimal, libpython3.11-minimal,
# libpython3.11-stdlib) and the shared libraries they load. Made from what
# apt installed here, nothing downloaded. Idempotent: an existing DIR with
# a python3 is kept.
#
#   scripts/gvisor-python-tree.sh DIR
#   S0_GVISOR_TEMPLATE=DIR s0 serve --runtime gvisor --data NEW_DIR
#     (the default template of a new data directory is built from it)
#
# ~60 MB, a few seconds (docs/local-backend.md "Runtime gvisor").
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir=${1:?usage: gvisor-python-tree.sh DIR}
[ -x "$dir/usr/bin/python3" ] && exit 0
s0_apt_install busybox-static python3-minimal >/dev/null
tmp="$dir.tmp.$$"
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,root,tmp,proc,dev,sys,var/tmp,home,workspace}
ln -s usr/bin "$tmp/bin"; ln -s usr/sbin "$tmp/sbin"
ln -s usr/lib "$tmp/lib"; ln -s usr/lib64 "$tmp/lib64"
cp /bin/busybox "$tmp/usr/bin/busybox"
for a in $(/bin/busybox --list); do
  [ -e "$tmp/usr/bin/$a" ] || ln -s busybox "$tmp/usr/bin/$a"
done
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$tmp/etc/passwd"
printf 'root:x:0:\n' > "$tmp/etc/group"

# the packages' own files (directories made, files and links copied)
pkgs="python3-minimal python3.11-minimal libpython3.11-minimal libpython3.11-stdlib"
for p in $pkgs; do
  dpkg-query -L "$p" 2>/dev/null
done | while read -r f; do
  case "$f" in /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*) continue ;; esac
  if [ -d "$f" ] && [ ! -L "$f" ]; then
    mkdir -p "$tmp$f"
  elif [ -e "$f" ] || [ -L "$f" ]; then
    mkdir -p "$tmp$(dirname "$f")"
    cp -a "$f" "$tmp$f"
  fi
done
# the shared libraries python and its extension modules load
libs=$( { ldd /usr/bin/python3.11; for so in /usr/lib/python3.11/lib-dynload/*.so; do ldd "$so"; done; } |
  awk '/=> \// {print $3} /^\t\/lib64/ {print $1}' | sort -u)
for l in $libs; do
  real=$(readlink -f "$l")
  mkdir -p "$tmp$(dirname "$real")"
  cp -a "$real" "$tmp$real"
  # the name the loader asks for, as a link (usr-merged paths)
  want=${l#/usr}; want=/usr${want}
  [ "$want" = "$real" ] || { mkdir -p "$tmp$(dirname "$want")"; ln -sf "$real" "$tmp$want"; }
done
mkdir -p "$(dirname "$dir")"
mv "$tmp" "$dir"
trap - EXIT
echo "==> python3 root tree at $dir ($(du -sh "$dir" | cut -f1))"
