# Part "gvisor": the gvisor runtime for real, as root (docs/local-backend.md
# "Runtime gvisor"). deps builds the pinned static runsc once into
# /var/cache/libsandbox0/runsc (scripts/install-runsc.sh; ~1.5 min on 2 idle
# cores the first time, nothing after), installs busybox-static and fuse3,
# and makes a python3 root tree from the installed Debian packages
# (scripts/gvisor-python-tree.sh; seconds, once). run: the meson suite `gvisor` (tests/unit/gvisor, and
# unit-local-gvisor: the lifecycle cases tagged "runtimes" on gvisor, counts per runtime printed), then a check
# that nothing of this run is left on the host — runsc processes, null-netns
# mounts, cgroups under s0-gvisor, loop devices over our files, all under the
# run's own $TMPDIR; network namespaces (their holders), s0v/s0tp links, an
# nft table inet s0 — which fails the part if anything is, after removing it.

# The python3 root tree the tests use as a template (outside the clone).
S0_GVISOR_PY_TREE=/var/cache/libsandbox0/trees/python3

deps() {
  # ip, nsenter and nft: the network tests' peers and checks (tests/unit/gvisor/check_gvisor_net.c)
  s0_apt_install iproute2 util-linux nftables &&
  scripts/install-runsc.sh && scripts/gvisor-python-tree.sh "$S0_GVISOR_PY_TREE"
}

# What a gvisor test run may leave on a failure: listed (and removed with
# "clean"). Prints one line per leftover. Only what names this run's own
# temporary directory $S0_GVISOR_TMP (the tests make their data directories
# under $TMPDIR), so gvisor tests of other checkouts running on the same
# machine are neither reported nor touched.
s0_gvisor_leftovers() {
  local mode=${1:-list} m p cg root=${S0_GVISOR_TMP:?}
  # runsc daemons of a test state directory ($root/s0-*/…/gvisor/runsc)
  for p in $(pgrep -f -- "--root=$root/[^ ]*/gvisor/runsc" 2>/dev/null); do
    echo "process $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null | cut -c1-120)"
    [ "$mode" = clean ] && kill -9 "$p" 2>/dev/null
  done
  # runsc's empty-netns bind mounts and the runtime tmpfs mounts of those directories
  for m in $(awk -v r="$root/" 'index($2, r) == 1 && $2 ~ "/gvisor/" {print $2}' /proc/mounts); do
    echo "mount $m"
    [ "$mode" = clean ] && umount -l "$m" 2>/dev/null
  done
  # loop devices over files of those directories
  losetup -a 2>/dev/null | grep -F "$root/" | grep '/gvisor/' | while IFS=: read -r dev _; do
    echo "loop $dev"
    [ "$mode" = clean ] && losetup -d "$dev" 2>/dev/null
  done
  # generation cgroups of a runtime whose bundle (named by the runtime id) is still there
  for cg in /sys/fs/cgroup/*/s0-gvisor/*/; do
    [ -d "$cg" ] || continue
    compgen -G "$root/*/gvisor/bundles/$(basename "$cg")" >/dev/null || continue
    echo "cgroup $cg"
    if [ "$mode" = clean ]; then
      for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
      rmdir "$cg" 2>/dev/null
    fi
  done
  # network (gv_net.h): namespaces live only while a runsc or test process
  # holds them (peers are children of unit-gvisor-net); our links and table
  # never reach the host's namespace
  # (only this checkout's build: another checkout's test may be running)
  local net_test="$PWD/build/tests/unit/gvisor/unit-gvisor-net"
  for p in $(pgrep -f -- "$net_test" 2>/dev/null); do
    # a peer outliving its test (peers are children of the test: PPID not the test's)
    pgrep -f -- "$net_test" | grep -qx "$(ps -o ppid= -p "$p" | tr -d ' ')" && continue
    echo "process $p (a test peer, holding a network namespace)"
    [ "$mode" = clean ] && kill -9 "$p" 2>/dev/null
  done
  ip -o link show 2>/dev/null | awk -F': ' '$2 ~ /^s0(v|tp)[0-9]/ {sub(/@.*/, "", $2); print $2}' |
    while read -r l; do echo "link $l"; [ "$mode" = clean ] && ip link del "$l" 2>/dev/null; done
  if nft list table inet s0 >/dev/null 2>&1; then
    echo "nft table inet s0 in the host's namespace"
    [ "$mode" = clean ] && nft delete table inet s0
  fi
  if [ "$mode" = clean ]; then
    rmdir /sys/fs/cgroup/*/s0-gvisor 2>/dev/null
  fi
  return 0
}

run() {
  if [ "$(id -u)" != 0 ]; then
    echo "gvisor: needs root (runsc, cgroups); run scripts/test gvisor as root" >&2
    s0_tally gvisor 0 1 0
    return 1
  fi
  local rc=0 left
  S0_GVISOR_TMP=$(mktemp -d /tmp/s0-gvpart-XXXXXX)
  trap 's0_gvisor_leftovers clean >/dev/null; rm -rf "$S0_GVISOR_TMP"' RETURN
  TMPDIR=$S0_GVISOR_TMP S0_TEST_PYTHON_TREE=$S0_GVISOR_PY_TREE s0_meson_suites gvisor build gvisor || rc=1
  scripts/gvisor-conformance-counts.sh build # the same rows on sim and on gvisor
  left=$(s0_gvisor_leftovers list)
  local p f s
  read -r p f s < "$S0_RESULTS/gvisor" 2>/dev/null || { p=0; f=1; s=0; }
  if [ -n "$left" ]; then
    printf 'gvisor: left on the host after the tests:\n%s\n' "$left" >&2
    s0_gvisor_leftovers clean >/dev/null
    f=$((f+1)); rc=1
  else
    echo "gvisor: nothing left on the host (processes, mounts, loop devices, cgroups, network)"
    p=$((p+1))
  fi
  s0_tally gvisor "$p" "$f" "$s"
  return $rc
}
