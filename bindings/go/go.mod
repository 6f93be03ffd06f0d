module github.com/libsandbox0/libsandbox0/bindings/go

go 1.23
