package sandbox0

// #cgo pkg-config: sandbox0
// #include <stdint.h>
// #include <sandbox0/sandbox0.h>
// uintptr_t s0go_predicate_addr(void);
import "C"

import (
	"runtime/cgo"
	"unsafe"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// predicateAddr is the address of the C trampoline (wait_trampoline.c)
// that s0_sandbox_wait calls; it forwards to s0goPredicate.
func predicateAddr() uintptr { return uintptr(C.s0go_predicate_addr()) }

// s0goPredicate runs a WaitForSandboxLifecycle predicate for the C wait:
// 1 = done, 0 = keep polling, S0_EUSER after a panic (re-raised by the caller).
//
//export s0goPredicate
func s0goPredicate(info unsafe.Pointer, payload C.uintptr_t) C.int {
	st := cgo.Handle(payload).Value().(*predState)
	sb := sandboxFromC(capi.SwigcptrStruct_SS_s0_sandbox_info(uintptr(info)))
	if sb != nil {
		sb.client = st.c
	}
	st.c.core.predicate(+1) // a Close made meanwhile does not wait for this call
	defer st.c.core.predicate(-1)
	done := func() (ok bool) {
		defer func() {
			if r := recover(); r != nil {
				st.panic = r
			}
		}()
		return st.pred(sb)
	}()
	switch {
	case st.panic != nil:
		return C.int(codeEUSER)
	case done:
		return 1
	default:
		return 0
	}
}
