#!/usr/bin/env bash
# Client benchmark (README.md): one `s0 serve`, one sandbox, then a GET of it
# N times each through our C client, raw libcurl on one reused connection,
# and the Python, Go and Node packages when they can run here; one table.
#
#   bench/client/run.sh [BUILD_DIR]      (default: build; N: $BENCH_CLIENT_N or 2000)
#
# The Python package is used from BUILD_DIR/bindings/python (meson builds it
# when python3-dev and swig are installed); the Go one when `go` is on PATH
# (built against BUILD_DIR like scripts/test.d/40-go.sh, no network:
# GOPROXY=off); the Node one when bindings/node/dist and its addon exist
# (scripts/test.d/50-node.sh builds them).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "${1:-$root/build}" && pwd)
N=${BENCH_CLIENT_N:-2000}
s0=$B/libsandbox0/cli/s0
bc=$B/bench/client/bench_client
[ -x "$s0" ] && [ -x "$bc" ] || { echo "build first: ninja -C $B" >&2; exit 1; }

tmp=$(mktemp -d /tmp/s0-bench-client.XXXXXX)
token="s0_bench_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
"$s0" serve --data "$tmp/data" --listen 127.0.0.1:0 --token "$token" --runtime sim -q &
pid=$!
trap 'kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 200); do [ -s "$tmp/data/server.json" ] && break; sleep 0.05; done
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$tmp/data/server.json")
id=$("$bc" claim "$url" "$token")

declare -A us
while read -r k v; do us[$k]=$v; done < <("$bc" get "$url" "$token" "$id" "$N")
# The C call again right after a binding's run (a third of the calls): each
# binding is set against the mean of the C runs just before and after it,
# since the load of a shared machine moves between runs (README.md).
c_prev=${us[c_client_us]}
c_beside() {
  local k=$1 next
  next=$("$bc" get "$url" "$token" "$id" $((N / 3)) | awk '/^c_client_us/ {print $2}')
  us[${k}_c]=$(python3 -c "import sys; print(f'{(float(sys.argv[1]) + float(sys.argv[2])) / 2:.1f}')" "$c_prev" "$next")
  c_prev=$next
}
if PYTHONPATH="$B/bindings/python" python3 -c 'from libsandbox0 import Client' 2>/dev/null; then
  while read -r k v; do us[$k]=$v; done < <(PYTHONPATH="$B/bindings/python" \
    python3 "$root/bench/client/bench_get.py" "$url" "$token" "$id" "$N")
  c_beside python
fi
if command -v go >/dev/null; then
  out=$(cd "$root/bench/client/go" &&
    PKG_CONFIG_PATH="$B/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
    CGO_ENABLED=1 CGO_LDFLAGS="-Wl,-rpath,$B/libsandbox0" GOPROXY=off GOFLAGS=-mod=mod \
    GOTOOLCHAIN=local GOTELEMETRY=off go run . "$url" "$token" "$id" "$N" 2>/dev/null) &&
    { while read -r k v; do us[$k]=$v; done <<<"$out"; c_beside go; } ||
    echo "(go package did not build here: skipped)" >&2
fi
if [ -f "$root/bindings/node/dist/src/index.js" ] && command -v node >/dev/null; then
  # the addon was linked against an installed copy of the library: use the build's
  out=$(LD_LIBRARY_PATH="$B/libsandbox0${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    node "$root/bench/client/bench_get.mjs" "$root/bindings/node" "$url" "$token" "$id" "$N" 2>/dev/null) &&
    { while read -r k v; do us[$k]=$v; done <<<"$out"; c_beside node; } ||
    echo "(node package did not load here: skipped)" >&2
fi

c=${us[c_client_us]} raw=${us[raw_curl_us]}
cc=${us[c_client_cpu]} rc=${us[raw_curl_cpu]}
ratio() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.2f}')" "$1" "$2"; }
echo "GET /api/v1/sandboxes/{id} against one \`s0 serve\` on loopback, median of 9 rounds of $((N / 9));"
echo "CPU: the calling process's CPU time per GET (all its threads, user + system; not the server's)"
echo
echo "C beside: the mean of the C client's runs just before and after that caller's"
echo
echo "| caller | us per GET | C beside | ratio | goal | CPU us per GET | CPU ratio |"
echo "|---|---|---|---|---|---|---|"
echo "| raw libcurl, one reused connection | $raw | | 1.00 | | $rc | 1.00 |"
echo "| our C client (s0_sandbox_get) | $c | | $(ratio "$c" "$raw") vs raw | <= 1.2 | $cc | $(ratio "$cc" "$rc") vs raw |"
for k in python go node; do
  v=${us[${k}_us]:-} u=${us[${k}_cpu]:-} cb=${us[${k}_c]:-}
  if [ -n "$v" ]; then
    echo "| $k package | $v | $cb | $(ratio "$v" "$cb") vs C | <= 1.5 | $u | $(ratio "$u" "$cc") vs C |"
  else
    echo "| $k package | not run here | | | <= 1.5 | | |"
  fi
done
