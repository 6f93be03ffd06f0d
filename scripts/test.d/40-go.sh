# Part "go": the Go package (bindings/go: SWIG-generated capi + the
# idiomatic package and its facade) and examples/go. Checks that the
# committed SWIG wrapper and error table regenerate without a diff, runs
# go vet, then go test -race with GOEXPERIMENT=cgocheck2 over the embedded
# backend, `s0 serve` on loopback, the consumer module and the example.
# Prints go test's own output; the tally is its test counts plus the three
# checks.

# The go command: on PATH, else Debian's backported one.
s0_go_cmd() {
  command -v go && return 0
  local g
  for g in /usr/lib/go-1.2[3-9]/bin/go; do
    [ -x "$g" ] && { echo "$g"; return 0; }
  done
  return 1
}

# Go >= 1.23 (the module's go line) from Debian's packages, only when no go
# is on PATH. Debian 12 ships 1.19, so there it comes from bookworm-backports
# (golang-go 2:1.23~2~bpo12+1 -> golang-1.23-go), enabled here if missing.
deps() {
  command -v go >/dev/null && return 0
  local sudo="" codename=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  if [ "$codename" = bookworm ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      echo "==> enabling bookworm-backports (Go 1.23 for the Go package)"
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
        $sudo tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null || return 1
    fi
    echo "==> installing: golang-go (bookworm-backports)"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      -t bookworm-backports golang-go || return 1
  else
    s0_apt_install golang-go || return 1
  fi
}

run() {
  local go root=$PWD B=$PWD/build tmp p=0 f=0
  go=$(s0_go_cmd) || { echo "go: no go command (deps failed?)" >&2; s0_tally go 0 1 0; return 1; }
  tmp=$(mktemp -d /tmp/s0-go.XXXXXX)
  export PATH="$(dirname "$go"):$PATH"
  export PKG_CONFIG_PATH="$B/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export CGO_ENABLED=1 CGO_LDFLAGS="-Wl,-rpath,$B/libsandbox0"
  export GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local GOTELEMETRY=off
  export S0_BIN="$B/libsandbox0/cli/s0"
  [ -n "${HOME:-}" ] || export GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath"
  echo "==> $(go version)"

  # 1. The committed SWIG wrapper is what capi.i generates.
  if bindings/go/internal/capi/gen.sh "$tmp" &&
     diff -u bindings/go/internal/capi/capi.go "$tmp/capi.go" &&
     diff -u bindings/go/internal/capi/capi_wrap.c "$tmp/capi_wrap.c" >/dev/null; then
    echo "go: SWIG wrapper up to date"; p=$((p+1))
  else
    echo "go: SWIG wrapper differs from bindings/go/internal/capi/gen.sh's output" >&2; f=$((f+1))
  fi
  # 2. The error table is what error.h generates.
  if (cd bindings/go && go run ./internal/generrors ../../include/sandbox0/error.h "$tmp/errors_table.go") &&
     diff -u bindings/go/errors_table.go "$tmp/errors_table.go"; then
    echo "go: error table up to date"; p=$((p+1))
  else
    echo "go: errors_table.go differs from internal/generrors' output" >&2; f=$((f+1))
  fi
  # 3. go vet: clean on the hand-written packages (the generated capi is
  # only excused SWIG's own unsafe.Pointer conversions).
  if (cd bindings/go && go vet -json ./... > "$tmp/vet.json" 2>&1 && cd "$root/examples/go" && go vet -unsafeptr=false ./...) &&
     python3 - "$tmp/vet.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, i, bad = json.JSONDecoder(), 0, []
while True:
    j = text.find("{", i)
    if j < 0:
        break
    obj, i = dec.raw_decode(text, j)
    for pkg, analyzers in obj.items():
        for name, diags in analyzers.items():
            if pkg.endswith("/internal/capi") and name == "unsafeptr":
                continue
            bad += [f"{pkg}: {name}: {d.get('posn')}: {d.get('message')}" for d in diags]
print("\n".join(bad), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
  then
    echo "go: go vet clean"; p=$((p+1))
  else
    cat "$tmp/vet.json" >&2; echo "go: go vet failed" >&2; f=$((f+1))
  fi

  # 4. The tests, under the race detector and cgocheck2; go test's own
  # output is printed from its JSON events, and its counts tallied.
  local rc=0 tp tf ts
  (cd bindings/go && GOEXPERIMENT=cgocheck2 nice go test -race -count=1 -timeout 20m -json ./...) \
    > "$tmp/test.json" || rc=1
  python3 - "$tmp/test.json" "$tmp/counts" <<'PY'
import json, sys
p = f = s = 0
failed_tests = set()  # packages with a failed test
for line in open(sys.argv[1]):
    try:
        ev = json.loads(line)
    except ValueError:
        print(line, end="")  # build errors are plain text
        continue
    if ev.get("Action") == "output":
        print(ev.get("Output", ""), end="")
    a = ev.get("Action")
    if ev.get("Test"):
        if "/" not in ev["Test"]:
            p += a == "pass"; f += a == "fail"; s += a == "skip"
            if a == "fail":
                failed_tests.add(ev.get("Package"))
    elif a == "fail" and ev.get("Package") not in failed_tests:
        f += 1  # a package that failed outside any test (build, panic, timeout)
open(sys.argv[2], "w").write(f"{p} {f} {s}\n")
PY
  read -r tp tf ts < "$tmp/counts" || { tp=0; tf=1; ts=0; }
  [ "$rc" = 0 ] || [ "$tf" != 0 ] || tf=1
  rm -rf "$tmp"
  s0_tally go $((p+tp)) $((f+tf)) "$ts"
  [ $((f+tf)) = 0 ]
}
