#!/bin/sh
# Regenerate capi.go and capi_wrap.c from capi.i (needs swig 4.1 on PATH).
# The output is committed; scripts/test.d/40-go.sh checks it is up to date.
set -eu
cd "$(dirname "$0")"
swig -go -cgo -intgosize 64 -I../../../../include -module capi \
  -o capi_wrap.c -outdir . capi.i
gofmt -w capi.go
