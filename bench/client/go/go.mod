module github.com/libsandbox0/libsandbox0/bench/client/go

go 1.23

require github.com/libsandbox0/libsandbox0/bindings/go v0.0.0

replace github.com/libsandbox0/libsandbox0/bindings/go => ../../../bindings/go
