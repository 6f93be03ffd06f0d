// Package capi is the SWIG-generated C surface of libsandbox0 for the Go
// package (capi.go and capi_wrap.c are generated from capi.i by gen.sh and
// committed). It is internal: use the package sandbox0 one level up.
package capi

// #cgo pkg-config: sandbox0
import "C"
