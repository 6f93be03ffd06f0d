package sandbox0

// #cgo pkg-config: sandbox0
// #include <stdint.h>
// #include <stdlib.h>
// #include <sandbox0/sandbox0.h>
//
// /* The client arrives as the integer SWIG keeps (capi's Swigcptr); the C
//  * side turns it back into the pointer. */
// static int s0go_stream_open(uintptr_t c, int kind, const char *sandbox_id, const char *id,
//                             int64_t after, s0_stream **out, s0_error **err)
// {
// 	s0_stream_options o = S0_STREAM_OPTIONS_INIT;
// 	o.kind = kind;
// 	o.sandbox_id = sandbox_id;
// 	o.id = id;
// 	o.after = after;
// 	return s0_stream_open((s0_client *)c, &o, out, err);
// }
import "C"

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// readSlice is how long one C receive waits: a Recv waiting for a message
// notices its context's end, or a Close from another goroutine, within it.
const readSlice = 50 * time.Millisecond

// ErrStreamClosed is returned by a stream's calls after its Close.
var ErrStreamClosed = errors.New("sandbox0: stream closed")

// stream is one s0_stream. Only C pointers are kept (never a Go pointer in
// C memory); there is no callback from C, so no goroutine of its own: each
// call runs the C call on the caller's goroutine, one at a time (mu).
//
// The stream holds one in-flight slot of its client (clientCore.enter) from
// open to free, so the client's C objects it borrows outlive it; the
// client's Close closes its open streams first.
type stream struct {
	core    *clientCore
	mu      sync.Mutex   // serialises the C calls on st
	st      *C.s0_stream // nil once freed
	closing atomic.Bool  // Close was called
	code    int          // close code once ended (under mu)
	reason  string
	release sync.Once // gives the client slot back
}

// openStream opens a stream of kind on the client. The open is one call of
// the client (the context cancels it; the client's timeouts bound it).
func (c *Client) openStream(ctx context.Context, kind int, sandboxID, id string, after int64) (*stream, error) {
	if sandboxID == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID, id); err != nil {
		return nil, err
	}
	if c == nil || c.core == nil {
		return nil, invalid("the Client is nil or was not made by NewClient, NewClientFromEnv or Local.Client")
	}
	core := c.core
	if err := core.enter(); err != nil { // the stream's own slot
		return nil, err
	}
	s := &stream{core: core}
	csb := C.CString(sandboxID)
	defer C.free(unsafe.Pointer(csb))
	var cid *C.char
	if id != "" {
		cid = C.CString(id)
		defer C.free(unsafe.Pointer(cid))
	}
	var openErr error
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, _ capi.Struct_SS_s0go_call) {
		var st *C.s0_stream
		var e *C.s0_error
		rc := C.s0go_stream_open(C.uintptr_t(cc.Swigcptr()), C.int(kind), csb, cid, C.int64_t(after), &st, &e)
		if rc < 0 {
			openErr = takeCError(int(rc), e)
			return
		}
		s.st = st
	})
	if err == nil {
		err = openErr
	}
	if err == nil && !core.addStream(s) {
		err = errClosed("client")
	}
	if err != nil {
		s.free()
		return nil, err
	}
	return s, nil
}

// takeCError converts and frees a C error.
func takeCError(rc int, e *C.s0_error) error {
	defer C.s0_error_free(e)
	return convertError(rc, capi.SwigcptrStruct_SS_s0_error(uintptr(unsafe.Pointer(e))))
}

// free releases the C stream (after a C call in progress, at most one
// slice) and then the client slot. Idempotent; mu not held.
func (s *stream) free() {
	s.mu.Lock()
	st := s.st
	s.st = nil
	s.mu.Unlock()
	C.s0_stream_free(st) // NULL-safe
	s.release.Do(func() {
		s.core.dropStream(s)
		s.core.leave()
	})
}

// recv returns the next message. io.EOF-like end: ok false and err nil
// once the stream has ended (s.code says why).
func (s *stream) recv(ctx context.Context) (msg []byte, ok bool, err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	for {
		if s.closing.Load() {
			return nil, false, ErrStreamClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		s.mu.Lock()
		if s.st == nil {
			s.mu.Unlock()
			return nil, false, nil
		}
		var m *C.char
		var n C.size_t
		var e *C.s0_error
		rc := C.s0_stream_recv(s.st, C.int64_t(readSlice/time.Millisecond), &m, &n, &e)
		switch {
		case rc == C.S0_OK:
			out := C.GoBytes(unsafe.Pointer(m), C.int(n))
			C.s0_free(unsafe.Pointer(m))
			s.mu.Unlock()
			return out, true, nil
		case rc == C.S0_ETIMEDOUT:
			C.s0_error_free(e)
			s.mu.Unlock()
		case rc == C.S0_ITEROVER:
			C.s0_error_free(e)
			var why *C.char
			s.code = int(C.s0_stream_close_code(s.st, &why))
			s.reason = C.GoString(why)
			s.mu.Unlock()
			s.free() // ended: nothing more to read, the slot goes back
			return nil, false, nil
		default:
			s.mu.Unlock()
			return nil, false, takeCError(int(rc), e)
		}
	}
}

// send sends one client message.
func (s *stream) send(text []byte) error {
	if s.closing.Load() {
		return ErrStreamClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st == nil {
		return &Error{Kind: ErrGone, Reason: "stream_closed", Message: "the stream has ended"}
	}
	if len(text) == 0 {
		return invalid("empty stream message")
	}
	p := C.CBytes(text)
	defer C.free(p)
	var e *C.s0_error
	if rc := C.s0_stream_send(s.st, (*C.char)(p), C.size_t(len(text)), &e); rc < 0 {
		return takeCError(int(rc), e)
	}
	return nil
}

// closeCode is the close code and reason once the server ended the stream.
func (s *stream) closeCode() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.code, s.reason
}

// close detaches; a recv in progress returns ErrStreamClosed within one
// slice. Idempotent, safe from any goroutine.
func (s *stream) close() {
	s.closing.Store(true)
	s.free()
}
