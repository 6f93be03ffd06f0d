# Part "node": the TypeScript/Node package (bindings/node): its N-API addon
# compiled the way `npm install` does it (pkg-config sandbox0 + the running
# node's headers) against a `meson install --destdir` copy of the build, the
# TypeScript layer compiled by the pinned tsc, then `node --test` over the
# compiled tests (seed snippet, CL- rules, threading, leaks, examples,
# `npm pack` consumer) against the embedded backend and `s0 serve`.
deps() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    s0_apt_install nodejs npm libnode-dev || return 1
  fi
  s0_apt_install pkg-config || return 1
  local pkg=bindings/node
  if [ ! -f $pkg/node_modules/.package-lock.json ] ||
     [ $pkg/package-lock.json -nt $pkg/node_modules/.package-lock.json ]; then
    echo "==> npm ci in $pkg (typescript, @types/node; pinned)"
    # --ignore-scripts: the package's own install script builds the addon,
    # which needs the library; run() does that after the shared build.
    (cd $pkg && npm ci --ignore-scripts --no-audit --no-fund) || return 1
  fi
}

run() {
  local pkg=bindings/node prefix pcdir log rc=0
  prefix=$(mktemp -d /tmp/s0-node-prefix.XXXXXX)
  log=$(mktemp /tmp/s0-node-tap.XXXXXX)
  # run() is called in a subshell (scripts/test): clean up when it exits
  S0_NODE_TMP="$prefix $log"
  trap 'rm -rf $S0_NODE_TMP' EXIT
  if ! meson install -C build --destdir "$prefix" --quiet >/dev/null; then
    echo "meson install --destdir failed" >&2; s0_tally node 0 1 0; return 1
  fi
  pcdir=$(dirname "$(find "$prefix" -path '*/pkgconfig/sandbox0.pc' | head -1)")
  export PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$prefix"
  export S0_BIN="$PWD/build/libsandbox0/cli/s0"
  if ! (cd $pkg && node scripts/build-addon.mjs && npm run --silent build); then
    echo "building the node package failed" >&2; s0_tally node 0 1 0; return 1
  fi
  node --test --test-reporter=tap --test-concurrency=1 $pkg/dist/test/*.test.js 2>&1 | tee "$log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
  local p f c s t
  p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$log" | tail -1)
  f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$log" | tail -1)
  c=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$log" | tail -1)
  s=$(sed -n 's/^# skipped \([0-9]*\)$/\1/p' "$log" | tail -1)
  t=$(sed -n 's/^# todo \([0-9]*\)$/\1/p' "$log" | tail -1)
  [ -n "$p" ] || { p=0; f=1; rc=1; }
  f=$(( ${f:-0} + ${c:-0} ))
  [ "$f" = 0 ] || rc=1
  s0_tally node "$p" "$f" $(( ${s:-0} + ${t:-0} ))
  return $rc
}
