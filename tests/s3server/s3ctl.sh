#!/usr/bin/env bash
# A throwaway SeaweedFS S3 server on loopback for the S3 test part
# (scripts/test.d/48-s3.sh) and the outage tests that stop and restart it.
#
#   s3ctl.sh STATE_DIR init     choose free ports, write the S3 identity
#                               (STATE_DIR/s3.json) and STATE_DIR/env
#                               (S0_TEST_S3_URL, AWS_ACCESS_KEY_ID,
#                               AWS_SECRET_ACCESS_KEY for the tests)
#   s3ctl.sh STATE_DIR start    start the server on STATE_DIR/data, wait until
#                               S3 answers (bounded), keep its pid
#   s3ctl.sh STATE_DIR stop     stop it (SIGTERM, then SIGKILL after 10 s), wait
#   s3ctl.sh STATE_DIR kill     kill it at once (SIGKILL: an outage), wait
#
# The binary is $S0_WEED_BIN at init (built by the part's deps). Data, sockets and
# logs stay in STATE_DIR; the caller removes it. Authentication is on: one
# identity, whose secret is random per run.
set -euo pipefail
state=$1 cmd=$2
# the binary: $S0_WEED_BIN at init, remembered in STATE_DIR/weed-bin
if [ "$cmd" = init ]; then
  weed=${S0_WEED_BIN:?S0_WEED_BIN is the SeaweedFS binary}
else
  weed=$(cat "$state/weed-bin")
fi

free_ports() { # N free loopback ports
  python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
PY
}

case $cmd in
init)
  mkdir -p "$state/data"
  echo "$weed" >"$state/weed-bin"
  read -r -a p <<<"$(free_ports 8)"
  printf '%s\n' "${p[@]}" >"$state/ports"
  secret=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  cat >"$state/s3.json" <<JSON
{"identities": [{"name": "s0test",
  "credentials": [{"accessKey": "s0testaccess", "secretKey": "$secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
  chmod 600 "$state/s3.json"
  cat >"$state/env" <<ENV
S0_TEST_S3_URL='s3://s0test?endpoint=http://127.0.0.1:${p[6]}&region=us-east-1&gc_grace_s=0'
AWS_ACCESS_KEY_ID=s0testaccess
AWS_SECRET_ACCESS_KEY=$secret
ENV
  ;;
start)
  mapfile -t p <"$state/ports"
  # its own process group (job control on): a test that restarts it must
  # not take it down when the test's process group is killed
  set -m
  # its logs (glog writes to the temporary directory) stay in the state dir
  mkdir -p "$state/tmp"
  TMPDIR="$state/tmp" "$weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$state/data" \
    -master.port="${p[0]}" -master.port.grpc="${p[1]}" -master.telemetry=false \
    -master.volumeSizeLimitMB=64 -volume.max=0 \
    -volume.port="${p[2]}" -volume.port.grpc="${p[3]}" \
    -filer -filer.port="${p[4]}" -filer.port.grpc="${p[5]}" \
    -filer.localSocket="$state/filer.sock" \
    -s3 -s3.port="${p[6]}" -s3.port.grpc="${p[7]}" -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.localSocket="$state/s3.sock" -s3.config="$state/s3.json" \
    >>"$state/weed.log" 2>&1 </dev/null &
  echo $! >"$state/pid"
  set +m
  # ready when S3 answers an unsigned request (403: authentication is on)
  for _ in $(seq 1 600); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${p[6]}/s0test" || true)
    [ "$code" = 403 ] && exit 0
    kill -0 "$(cat "$state/pid")" 2>/dev/null || { tail -20 "$state/weed.log" >&2; exit 1; }
    sleep 0.1
  done
  echo "SeaweedFS did not answer on port ${p[6]} within 60 s" >&2
  tail -20 "$state/weed.log" >&2
  exit 1
  ;;
stop | kill)
  [ -f "$state/pid" ] || exit 0
  pid=$(cat "$state/pid")
  sig=TERM
  [ "$cmd" = kill ] && sig=KILL
  kill -"$sig" "$pid" 2>/dev/null || { rm -f "$state/pid"; exit 0; }
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  rm -f "$state/pid"
  # the local gRPC sockets it makes under /tmp whatever TMPDIR says, one per gRPC port
  mapfile -t p <"$state/ports"
  for port in "${p[@]}"; do
    rm -f "/tmp/seaweedfs-master-grpc-$port.sock" "/tmp/seaweedfs-filer-grpc-$port.sock" \
      "/tmp/seaweedfs-volume-grpc-$port.sock" "/tmp/seaweedfs-s3-grpc-$port.sock"
  done
  ;;
*)
  echo "usage: s3ctl.sh STATE_DIR init|start|stop|kill" >&2
  exit 2
  ;;
esac
