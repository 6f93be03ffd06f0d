package sandbox0

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

//go:generate go run ./internal/generrors ../../include/sandbox0/error.h errors_table.go

// CodeClaimStartThrottled is the wire code of a 429 that throttles claims
// (the official SDK's constant).
const CodeClaimStartThrottled = "claim_start_throttled"

// ErrorKind is one row of the library's error table (S0_CODE_MAP). The
// generated sentinels (ErrNotFound, ErrConflict, ErrUnavailable…) are
// ErrorKinds; every error this package returns satisfies errors.Is against
// the sentinel of its code.
type ErrorKind struct {
	Code        int    // the library's s0_code (negative)
	Name        string // stable snake_case name, e.g. "not_found"
	Description string // one-line English description
}

// Error returns "sandbox0: " followed by the kind's description.
func (k *ErrorKind) Error() string { return "sandbox0: " + k.Description }

func kindOf(code int) *ErrorKind {
	if k, ok := errorKinds[code]; ok {
		return k
	}
	return ErrUnexpected
}

type wireErrorRow struct {
	wireCode   string
	httpStatus int
	code       int
	reason     string
}

type wireReasonRow struct {
	wireCode string
	message  string
	reason   string
}

// APIError is a failure the API answered (an HTTP error status, or a 2xx
// body that could not be understood: Code "unexpected_response"). Its fields
// are the official SDK's plus Kind, Reason, RetryAfterMs and SandboxID.
type APIError struct {
	StatusCode        int    // HTTP status of the failing response
	Code              string // wire error.code as sent ("not_found", "sandbox_resume_failed"…)
	Message           string // wire error.message
	RequestID         string // X-Request-Id (or a variant), "" when absent
	Details           any    // decoded error.details, nil when absent
	Body              []byte // raw response body
	RetryAfterSeconds int    // Retry-After in whole seconds (rounded up); 0 when absent
	// RetryAfterMs is Retry-After in milliseconds (seconds or an HTTP date,
	// RFC 9110); -1 when absent.
	RetryAfterMs int64
	Reason       string     // stable reason ("waking_up", "lifecycle_conflict"…)
	Kind         *ErrorKind // the library's kind (ErrNotFound…)
	SandboxID    string     // the sandbox the call was about, "" when unknown
	LastSandbox  *Sandbox   // for errors ending a wait: the last sandbox it saw, else nil
	// Retryable: repeating the same request later may succeed (unavailable,
	// throttled, quota with a Retry-After, 502/504).
	Retryable bool
}

// Error returns "sandbox0 API error (<status>): <code> - <message>" (CL-16).
func (e *APIError) Error() string {
	return fmt.Sprintf("sandbox0 API error (%d): %s - %s", e.StatusCode, e.Code, e.Message)
}

// Is matches the sentinel of the error's kind.
func (e *APIError) Is(target error) bool { return target == error(e.Kind) }

// IsClaimStartThrottled reports a 429 with code claim_start_throttled.
func (e *APIError) IsClaimStartThrottled() bool {
	return e != nil && e.StatusCode == 429 && e.Code == CodeClaimStartThrottled
}

// IsClaimStartThrottled reports whether err is (or wraps) an *APIError that
// throttles claims.
func IsClaimStartThrottled(err error) bool {
	var api *APIError
	return errors.As(err, &api) && api.IsClaimStartThrottled()
}

// SandboxWaitTimeoutError ends a wait whose budget ran out; the server's
// operation goes on. It matches ErrTimeout, and context.DeadlineExceeded
// when the context's deadline was what limited the wait.
type SandboxWaitTimeoutError struct {
	SandboxID   string
	Timeout     time.Duration // the budget the wait had
	LastSandbox *Sandbox      // the last sandbox observed, nil if none
	// Cause is the last transient failure when the last request failed, else nil.
	Cause error
	// ContextDeadline is true when the context's deadline (earlier than
	// the options' Timeout) set the budget.
	ContextDeadline bool
}

// Error returns "timed out waiting for sandbox <id> after <timeout>".
func (e *SandboxWaitTimeoutError) Error() string {
	return fmt.Sprintf("timed out waiting for sandbox %s after %s", e.SandboxID, e.Timeout)
}

// Is matches ErrTimeout, and context.DeadlineExceeded when ContextDeadline.
func (e *SandboxWaitTimeoutError) Is(target error) bool {
	return target == error(ErrTimeout) ||
		(e.ContextDeadline && target == context.DeadlineExceeded)
}

// Unwrap returns Cause.
func (e *SandboxWaitTimeoutError) Unwrap() error { return e.Cause }

// SandboxLifecycleFailedError ends a memory pause or resume wait that saw
// the sandbox fail (status failed): a capture or restore failure is never
// reported as success. It matches ErrLifecycleFailed.
type SandboxLifecycleFailedError struct {
	SandboxID   string
	Action      string   // "memory pause" or "memory resume"
	LastSandbox *Sandbox // the failed sandbox as observed
	Reason      string   // "memory_pause_failed", "memory_resume_failed"…
}

// Error returns "sandbox <id> <action> reached failed status".
func (e *SandboxLifecycleFailedError) Error() string {
	return fmt.Sprintf("sandbox %s %s reached failed status", e.SandboxID, e.Action)
}

// Is matches ErrLifecycleFailed.
func (e *SandboxLifecycleFailedError) Is(target error) bool {
	return target == error(ErrLifecycleFailed)
}

// Error is a failure raised by the library itself, with no HTTP answer:
// an invalid argument refused before any request, a transport failure, a
// closed client, a local storage error of the embedded backend…
type Error struct {
	Kind      *ErrorKind // ErrInvalidArgument, ErrTransport, ErrIO…
	Reason    string     // stable reason ("invalid_argument", "curl:7", "data_dir_locked"…)
	Message   string
	SandboxID string // the sandbox the call was about, "" when unknown
	Cause     error  // a wrapped lower-level error, nil when none
	Retryable bool   // repeating the call later may succeed (transport errors)
}

// Error returns "sandbox0: <message> (<reason>)".
func (e *Error) Error() string {
	return fmt.Sprintf("sandbox0: %s (%s)", e.Message, e.Reason)
}

// Is matches the sentinel of the error's kind (and context.Canceled for
// ErrCanceled).
func (e *Error) Is(target error) bool {
	return target == error(e.Kind) || (e.Kind == ErrCanceled && target == context.Canceled)
}

// Unwrap returns Cause.
func (e *Error) Unwrap() error { return e.Cause }

// invalid makes the ErrInvalidArgument error of a check done in Go before
// any request.
func invalid(format string, args ...any) error {
	return &Error{Kind: ErrInvalidArgument, Reason: "invalid_argument",
		Message: fmt.Sprintf(format, args...)}
}

// noNUL refuses strings that C would silently cut at a NUL byte (an id
// "sb_a\x00b" would reach sandbox "sb_a"): ErrInvalidArgument, before any
// request.
func noNUL(args ...string) error {
	for _, a := range args {
		if i := strings.IndexByte(a, 0); i >= 0 {
			// the value is not echoed: it may be a token
			return invalid("a string argument contains a NUL byte (at byte %d of %d); C strings cannot carry one", i, len(a))
		}
	}
	return nil
}

// errClosed is returned by calls on a closed Client or Local.
func errClosed(what string) error {
	return &Error{Kind: ErrInvalidArgument, Reason: "closed", Message: what + " is closed"}
}

// convertError builds the Go error of a C error (borrowed; the caller frees
// it) whose call returned rc.
func convertError(rc int, e capi.Struct_SS_s0_error) error {
	if e == nil || e.Swigcptr() == 0 {
		k := kindOf(rc)
		return &Error{Kind: k, Reason: k.Name, Message: k.Description}
	}
	code := capi.S0_error_code(e)
	kind := kindOf(code)
	reason := capi.S0_error_reason(e)
	message := capi.S0_error_message(e)
	sandboxID := capi.S0_error_sandbox_id(e)
	var last *Sandbox
	if ls := capi.S0_error_last_sandbox(e); ls != nil && ls.Swigcptr() != 0 {
		last = sandboxFromC(ls)
	}
	var cause error
	if ce := capi.S0_error_cause(e); ce != nil && ce.Swigcptr() != 0 {
		cause = convertError(capi.S0_error_code(ce), ce)
	}
	switch {
	case code == codeELIFECYCLE:
		return &SandboxLifecycleFailedError{SandboxID: sandboxID,
			Action: capi.S0_error_action(e), LastSandbox: last, Reason: reason}
	case code == codeETIMEDOUT && reason == "wait_deadline":
		return &SandboxWaitTimeoutError{SandboxID: sandboxID,
			Timeout:     time.Duration(capi.S0_error_timeout_ms(e)) * time.Millisecond,
			LastSandbox: last, Cause: cause}
	}
	status := capi.S0_error_http_status(e)
	wire := capi.S0_error_wire_code(e)
	if status == 0 && wire == "" {
		return &Error{Kind: kind, Reason: reason, Message: message, SandboxID: sandboxID,
			Cause: cause, Retryable: capi.S0_error_is_retryable(e)}
	}
	api := &APIError{StatusCode: status, Code: wire, Message: message,
		RequestID: capi.S0_error_request_id(e), Body: capi.S0go_error_body(e),
		RetryAfterMs: capi.S0_error_retry_after_ms(e), Reason: reason, Kind: kind,
		SandboxID: sandboxID, LastSandbox: last, Retryable: capi.S0_error_is_retryable(e)}
	if api.RetryAfterMs >= 0 {
		api.RetryAfterSeconds = int((api.RetryAfterMs + 999) / 1000)
	}
	if d := capi.S0_error_details_json(e); d != "" {
		var v any
		if json.Unmarshal([]byte(d), &v) == nil {
			api.Details = v
		}
	}
	return api
}
