# Part "carrier": the carrier (libsandbox0/local/runtime/carrier/): a RootFS
# branch mounted as kernel ext4 through FUSE + loop, as root (meson suite
# `carrier`, program check_carrier). The program skips (exit 77) naming the
# missing piece only where s0__carrier_probe() fails (not root, no
# /dev/fuse, no loop devices). Afterwards the part fails if any loop device
# or mount of a carrier test directory is left on the host.

deps() {
  s0_apt_install fuse3 libfuse3-dev util-linux e2fsprogs
}

run() {
  local rc=0 loops mounts
  s0_meson_suites carrier build carrier || rc=1
  # The suite reclaims and checks its own directories; this is the final
  # word, over every process's mount table and every loop device.
  loops=$(losetup -a 2>/dev/null | grep -c '/s0-carrier-' || true)
  mounts=$(cat /proc/[0-9]*/mountinfo 2>/dev/null | grep -c '/s0-carrier-' || true)
  if [ "${loops:-0}" != 0 ] || [ "${mounts:-0}" != 0 ]; then
    echo "carrier: left on the host: $loops loop device(s), $mounts mount(s):" >&2
    losetup -a 2>/dev/null | grep '/s0-carrier-' >&2
    grep -H '/s0-carrier-' /proc/[0-9]*/mountinfo 2>/dev/null >&2
    local p f s
    read -r p f s < "$S0_RESULTS/carrier" 2>/dev/null || { p=0; f=0; s=0; }
    s0_tally carrier "$p" $((f + 1)) "$s"
    rc=1
  fi
  return $rc
}
