#!/usr/bin/env bash
# `s0 serve --objects s3://…` against the S3 server of the s3 part
# (scripts/test.d/48-s3.sh sets S0_TEST_S3_URL and the credentials):
#   1. a wrong secret stops it at start with a clear error (exit non-zero,
#      "refused the credentials"), and neither credential is printed;
#   2. with the right ones it serves: a sandbox is created, written, paused
#      and resumed, its file read back, and nothing it printed (stdout,
#      stderr, the access log) contains either credential.
# Usage: serve_check.sh PATH/TO/s0
set -u
s0=$1
dir=$(mktemp -d /tmp/s0-serve-s3.XXXXXX)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "serve_check: $*" >&2; [ -f "$dir/out" ] && sed 's/^/  | /' "$dir/out" >&2; exit 1; }
url="${S0_TEST_S3_URL%%\?*}/serve-check-$$?${S0_TEST_S3_URL#*\?}"
no_secrets() {
  ! grep -qF -- "$AWS_SECRET_ACCESS_KEY" "$1" && ! grep -qF -- "$AWS_ACCESS_KEY_ID" "$1" &&
    ! grep -qF -- wrong-secret-5d2e "$1"
}

AWS_SECRET_ACCESS_KEY=wrong-secret-5d2e "$s0" serve --data "$dir/a" --objects "$url" \
  --key-file "$dir/key" --listen 127.0.0.1:0 --runtime sim --quiet >"$dir/out" 2>&1 </dev/null
rc=$?
[ "$rc" -ne 0 ] || fail "a wrong secret was accepted"
grep -q "refused the credentials" "$dir/out" || fail "no clear error for a wrong secret"
no_secrets "$dir/out" || fail "a credential was printed"
echo "ok: a wrong secret stops s0 serve: $(grep -m1 refused "$dir/out")"

"$s0" serve --data "$dir/b" --objects "$url" --key-file "$dir/key" --listen 127.0.0.1:0 \
  --runtime sim >"$dir/out" 2>&1 </dev/null &
pid=$!
for _ in $(seq 1 300); do
  grep -q '^Listening on' "$dir/out" && break
  kill -0 "$pid" 2>/dev/null || fail "s0 serve exited"
  sleep 0.1
done
api=$(sed -n 's/^Listening on \(http[^ ]*\).*/\1/p' "$dir/out")
[ -n "$api" ] || fail "s0 serve did not start"
cli=("$s0" --api-url "$api" --token "$(cat "$dir/b/cli-token")")
id=$("${cli[@]}" -o json sandbox create --template default | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])') ||
  fail "create"
echo "s3 object store" >"$dir/file"
"${cli[@]}" sandbox files upload -s "$id" "$dir/file" /workspace/f >/dev/null || fail "upload"
"${cli[@]}" sandbox pause "$id" --wait >/dev/null || fail "pause"
"${cli[@]}" sandbox resume "$id" --wait >/dev/null || fail "resume"
got=$("${cli[@]}" sandbox files cat -s "$id" /workspace/f) || fail "cat"
[ "$got" = "s3 object store" ] || fail "read back \"$got\""
kill "$pid"
wait "$pid"
pid=
no_secrets "$dir/out" || fail "a credential was printed"
[ -f "$dir/b/objects/backend" ] && [ "$(cat "$dir/b/objects/backend")" = s3 ] || fail "no s3 record"
echo "ok: s0 serve --objects paused and resumed on S3; no credential in its output"
