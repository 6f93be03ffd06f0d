# Part "sdk-js": the official npm SDK (pinned in tests/sdk-js) against s0 serve
# (meson suite `sdk`). Its node_modules must exist before meson configures.
deps() {
  command -v node >/dev/null && command -v npm >/dev/null || s0_apt_install nodejs npm || return 1
  if [ ! -f tests/sdk-js/node_modules/.package-lock.json ] ||
     [ tests/sdk-js/package-lock.json -nt tests/sdk-js/node_modules/.package-lock.json ]; then
    echo "==> npm ci in tests/sdk-js (the official sandbox0 SDK, pinned)"
    (cd tests/sdk-js && npm ci --no-audit --no-fund) || return 1
  fi
  if [ -f build/build.ninja ] && ! meson introspect --tests build | grep -q '"name": *"sdk-js"'; then
    meson setup --reconfigure build >/dev/null || return 1
  fi
}
run() {
  s0_meson_suites sdk-js build sdk
}
