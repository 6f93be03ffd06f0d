package sandbox0

import (
	"context"
	"runtime/cgo"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// Default budgets of the wait helpers (docs/decisions.md).
const (
	DefaultSandboxLifecycleTimeout       = 60 * time.Second  // filesystem mode and WaitForSandboxLifecycle
	DefaultSandboxMemoryLifecycleTimeout = 360 * time.Second // memory mode
)

// SandboxLifecycleWaitOptions configures the wait helpers.
type SandboxLifecycleWaitOptions struct {
	// Memory selects execution-state preservation for PauseSandboxAndWait
	// and ResumeSandboxAndWait ({"memory": true} is sent, and a failed
	// status ends the wait with *SandboxLifecycleFailedError). It has no
	// effect on WaitForSandboxLifecycle.
	Memory bool
	// Timeout is the budget of the whole call; 0 = 60 s (360 s with
	// Memory). Negative: ErrInvalidArgument before any request. A context
	// deadline that comes earlier shortens it.
	Timeout time.Duration
	// PollInterval caps the backoff between polls (the first poll is
	// immediate, the first sleep min(100 ms, PollInterval), growing ×1.5
	// with jitter up to the cap); 0 = 100 ms growing to 500 ms. Negative:
	// ErrInvalidArgument before any request. Millisecond resolution.
	PollInterval time.Duration
}

// SandboxLifecyclePredicate decides whether an observed sandbox ends a
// WaitForSandboxLifecycle. It runs on the waiting goroutine.
type SandboxLifecyclePredicate func(*Sandbox) bool

type waitArgs struct {
	timeoutMs, pollInitialMs, pollMaxMs int64
	info                                waitInfo
}

func (o *SandboxLifecycleWaitOptions) args(ctx context.Context, id string, memory bool) (*waitArgs, error) {
	if id == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(id); err != nil {
		return nil, err
	}
	var opt SandboxLifecycleWaitOptions
	if o != nil {
		opt = *o
	}
	if opt.Timeout < 0 {
		return nil, invalid("timeout must be >= 0, got %s", opt.Timeout)
	}
	if opt.PollInterval < 0 {
		return nil, invalid("poll interval must be >= 0, got %s", opt.PollInterval)
	}
	budget := opt.Timeout
	if budget == 0 {
		budget = DefaultSandboxLifecycleTimeout
		if memory {
			budget = DefaultSandboxMemoryLifecycleTimeout
		}
	}
	a := &waitArgs{info: waitInfo{sandboxID: id}}
	if ctx != nil {
		if dl, ok := ctx.Deadline(); ok {
			if left := time.Until(dl); left < budget {
				budget, a.info.ctxDeadline = max(left, time.Millisecond), true
			}
		}
	}
	a.info.budget = budget
	a.timeoutMs = durationMs(budget)
	if opt.PollInterval > 0 {
		a.pollMaxMs = durationMs(opt.PollInterval)
		a.pollInitialMs = min(100, a.pollMaxMs)
	}
	return a, nil
}

func (c *Client) lifecycleWait(ctx context.Context, id string, resume bool, options *SandboxLifecycleWaitOptions) (*Sandbox, error) {
	memory := boolUnset
	if options != nil {
		memory = boolFalse
		if options.Memory {
			memory = boolTrue
		}
	}
	a, err := options.args(ctx, id, memory == boolTrue)
	if err != nil {
		return nil, err
	}
	var out *Sandbox
	err = c.do(ctx, &a.info, func(cc capi.Struct_SS_s0_client, tok capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		var p capi.Struct_SS_s0_sandbox_info
		if resume {
			p = capi.S0go_resume_and_wait(k, cc, id, memory, a.timeoutMs, a.pollInitialMs, a.pollMaxMs, 0, tok)
		} else {
			p = capi.S0go_pause_and_wait(k, cc, id, memory, a.timeoutMs, a.pollInitialMs, a.pollMaxMs, 0, tok)
		}
		out = takeSandbox(p, c)
	})
	return out, err
}

// PauseSandboxAndWait sends one pause and waits until the sandbox is
// paused (status paused and Paused true). Nil options send no body; non-nil
// send {"memory": options.Memory}. 200 and 202 both mean accepted. The
// pause is repeated with the same body only when its outcome is unknown
// (transport error, 502, 504); a definite error of the POST (404, 409, 429,
// 503…) is returned as an *APIError.
//
// Errors: *SandboxWaitTimeoutError at the budget (the pause goes on
// server-side); *SandboxLifecycleFailedError when a memory pause ends in
// failed; ctx.Err() when ctx is cancelled (the accepted pause goes on).
func (c *Client) PauseSandboxAndWait(ctx context.Context, sandboxID string, options *SandboxLifecycleWaitOptions) (*Sandbox, error) {
	return c.lifecycleWait(ctx, sandboxID, false, options)
}

// ResumeSandboxAndWait reads the sandbox, sends one resume and waits until
// the new runtime generation is running (generation before + 1 when it was
// paused). A stale running at the old generation, starting and resumed:
// false keep it polling without another POST. With Memory, failed at the
// new generation is *SandboxLifecycleFailedError ("memory resume"); an older
// failed is ignored. Errors otherwise as PauseSandboxAndWait; a 503
// sandbox_resume_failed is an *APIError matching ErrResumeFailed.
func (c *Client) ResumeSandboxAndWait(ctx context.Context, sandboxID string, options *SandboxLifecycleWaitOptions) (*Sandbox, error) {
	return c.lifecycleWait(ctx, sandboxID, true, options)
}

// predState is what the C predicate trampoline reaches through a cgo.Handle.
type predState struct {
	pred  SandboxLifecyclePredicate
	c     *Client
	panic any
}

// WaitForSandboxLifecycle polls GET /api/v1/sandboxes/{id} (first poll at
// once, then the backoff of options) until predicate returns true for an
// observed sandbox, and returns that sandbox. It sends no POST. Memory is
// ignored. Errors: ErrInvalidArgument (nil predicate, bad options) before any
// request; *SandboxWaitTimeoutError; an *APIError of a poll's definite error
// (404…); ctx.Err() when cancelled. A panic in predicate ends the wait and
// is re-raised on the calling goroutine. predicate must not call
// runtime.Goexit (t.Fatal, t.FailNow, t.SkipNow): it runs inside the C wait,
// which would be unwound without freeing what it holds; record the failure
// and return true instead.
func (c *Client) WaitForSandboxLifecycle(ctx context.Context, sandboxID string, predicate SandboxLifecyclePredicate, options *SandboxLifecycleWaitOptions) (*Sandbox, error) {
	if predicate == nil {
		return nil, invalid("predicate is required")
	}
	a, err := options.args(ctx, sandboxID, false)
	if err != nil {
		return nil, err
	}
	st := &predState{pred: predicate, c: c}
	h := cgo.NewHandle(st)
	defer h.Delete()
	var out *Sandbox
	err = c.do(ctx, &a.info, func(cc capi.Struct_SS_s0_client, tok capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_sandbox_wait(k, cc, sandboxID, 0, uint(predicateAddr()), uint(h),
			a.timeoutMs, a.pollInitialMs, a.pollMaxMs, 0, tok)
		out = takeSandbox(p, c)
	})
	if st.panic != nil {
		panic(st.panic)
	}
	return out, err
}

// WaitForSandboxDeleted polls GET /api/v1/sandboxes/{id} until it answers
// 404 (the sandbox is gone), with the schedule and budget rules of
// WaitForSandboxLifecycle (Memory ignored). Errors:
// *SandboxWaitTimeoutError (its LastSandbox still exists); ctx.Err() when
// cancelled; ErrInvalidArgument for bad options before any request.
func (c *Client) WaitForSandboxDeleted(ctx context.Context, sandboxID string, options *SandboxLifecycleWaitOptions) error {
	a, err := options.args(ctx, sandboxID, false)
	if err != nil {
		return err
	}
	st := &predState{pred: func(*Sandbox) bool { return false }, c: c}
	h := cgo.NewHandle(st)
	defer h.Delete()
	return c.do(ctx, &a.info, func(cc capi.Struct_SS_s0_client, tok capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_sandbox_wait(k, cc, sandboxID, 0, uint(predicateAddr()), uint(h),
			a.timeoutMs, a.pollInitialMs, a.pollMaxMs, waitNotFoundOK, tok)
		capi.S0_sandbox_info_free(p)
	})
}

// waitNotFoundOK is S0_WAIT_NOTFOUND_OK: a 404 ends the wait successfully.
const waitNotFoundOK = 0x2
