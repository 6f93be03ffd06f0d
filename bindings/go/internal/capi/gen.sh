#!/bin/sh
# Regenerate capi.go and capi_wrap.c from capi.i (needs swig 4.1 and gofmt
# on PATH). The output is committed so that Go users need no SWIG;
# scripts/test.d/40-go.sh regenerates into a temporary OUTDIR and checks
# that nothing differs.
#
#   gen.sh [OUTDIR]     (default: this directory)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
cd "$here"
swig -go -cgo -intgosize 64 -I../../../../include -module capi \
  -o "$out/capi_wrap.c" -outdir "$out" capi.i
gofmt -w "$out/capi.go"
