#!/usr/bin/env bash
# The reference of bench_gvisor: the same runsc (flags of the driver,
# libsandbox0/local/runtime/gvisor) on a PLAIN loop mount (direct I/O) of an
# ext4 image made from the same root tree at the same size — no carrier, no
# engine. As root. Prints key=value lines:
#   run_true_ms       `runsc run` of /bin/true, start to exit (median)
#   detach_exec_ms    `runsc run --detach` of an init, then `runsc exec /bin/true` (median)
#   delete_ms         `runsc delete --force` of that running sandbox (median)
#   unmount_ms        sync, umount and loop detach after 16 MiB written (median)
#   io                the line of io.py inside runsc on that mount
#
#   bench/gvisor/plain_runsc.sh TREE SIZE_BYTES ROUNDS
set -euo pipefail
tree=${1:?tree} size=${2:?size} rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd)
runsc=${S0_RUNSC:-$(ls /var/cache/libsandbox0/runsc/*/runsc | head -1)}
work=$(mktemp -d /tmp/s0-bench-plain.XXXXXX)
loop=""
cleanup() {
  "$runsc" --root="$work/state" delete --force bench-plain >/dev/null 2>&1 || true
  mountpoint -q "$work/mnt" && umount "$work/mnt"
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
  mountpoint -q "$work/state/null-netns" && umount "$work/state/null-netns" # runsc's empty netns
  rm -rf "$work"
}
trap cleanup EXIT
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
G=(--root="$work/state" --platform=systrap --network=none --overlay2=none --file-access=shared)

mkdir -p "$work/mnt" "$work/bundle" "$work/state"
truncate -s "$size" "$work/disk.img"
mkfs.ext4 -q -F -d "$tree" "$work/disk.img"
mount_it() {
  loop=$(losetup --find --show --direct-io=on "$work/disk.img")
  mount -t ext4 "$loop" "$work/mnt"
  mkdir -p "$work/mnt/workspace" "$work/mnt/root"
  cp "$here/io.py" "$work/mnt/root/io.py"
}
mount_it
# an OCI bundle: the mount as a writable root, the given argv
bundle() {
  python3 - "$work/bundle/config.json" "$work/mnt" "$@" <<'PY'
import json, sys
path, root, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
cfg = {"ociVersion": "1.0.0",
       "process": {"terminal": False, "user": {"uid": 0, "gid": 0}, "args": argv,
                   "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "cwd": "/"},
       "root": {"path": root, "readonly": False},
       "mounts": [{"destination": "/proc", "type": "proc", "source": "proc"},
                  {"destination": "/tmp", "type": "tmpfs", "source": "tmpfs"}],
       "linux": {"namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")]}}
json.dump(cfg, open(path, "w"))
PY
}
r1="" r2="" r3="" r4=""
for _ in $(seq "$rounds"); do
  bundle /bin/true
  t=$(date +%s%N); "$runsc" "${G[@]}" run --bundle "$work/bundle" bench-plain >/dev/null
  r1="$r1 $(ms "$t")"
  "$runsc" "${G[@]}" delete --force bench-plain >/dev/null 2>&1 || true
  bundle /bin/sleep 100000
  t=$(date +%s%N)
  "$runsc" "${G[@]}" run --detach --bundle "$work/bundle" bench-plain >/dev/null
  "$runsc" "${G[@]}" exec bench-plain /bin/true
  r2="$r2 $(ms "$t")"
  "$runsc" "${G[@]}" exec bench-plain /bin/sh -c \
    'dd if=/dev/urandom of=/root/dirty bs=1M count=16 2>/dev/null'
  t=$(date +%s%N); "$runsc" "${G[@]}" delete --force bench-plain >/dev/null
  r3="$r3 $(ms "$t")"
  t=$(date +%s%N); sync -f "$work/mnt"; umount "$work/mnt"; losetup -d "$loop"; loop=""
  r4="$r4 $(ms "$t")"
  mount_it
done
echo "run_true_ms=$(echo $r1 | median)"
echo "detach_exec_ms=$(echo $r2 | median)"
echo "delete_ms=$(echo $r3 | median)"
echo "unmount_ms=$(echo $r4 | median)"
bundle /usr/bin/python3 /root/io.py /root/io.dat "${S0_BENCH_IO_MIB:-64}"
io=$("$runsc" "${G[@]}" run --bundle "$work/bundle" bench-plain)
echo "io $io"
"$runsc" "${G[@]}" delete --force bench-plain >/dev/null 2>&1 || true
