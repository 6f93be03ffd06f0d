package sandbox0

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// DefaultBaseURL is the official API address, used when no base URL is given.
const DefaultBaseURL = "https://api.sandbox0.ai"

type clientConfig struct {
	baseURL   string
	baseSet   bool
	token     string
	userAgent string
	teamID    string
	timeout   time.Duration
}

// Option configures NewClient and NewClientFromEnv.
type Option func(*clientConfig) error

// WithBaseURL sets the API base URL (http(s)://host[:port][/path]); an
// empty string is an error.
func WithBaseURL(baseURL string) Option {
	return func(c *clientConfig) error {
		if strings.TrimSpace(baseURL) == "" {
			return invalid("base URL cannot be empty")
		}
		c.baseURL, c.baseSet = baseURL, true
		return nil
	}
}

// WithToken sets the bearer token (API key or JWT); blank sends no
// Authorization header.
func WithToken(token string) Option {
	return func(c *clientConfig) error { c.token = token; return nil }
}

// WithTimeout bounds each HTTP exchange (not a whole wait: waits have
// SandboxLifecycleWaitOptions.Timeout). It must be positive; the default is
// 120 s. Millisecond resolution.
func WithTimeout(timeout time.Duration) Option {
	return func(c *clientConfig) error {
		if timeout <= 0 {
			return invalid("timeout must be positive, got %s", timeout)
		}
		c.timeout = timeout
		return nil
	}
}

// WithUserAgent sets the User-Agent header ("" = "libsandbox0/<version>").
func WithUserAgent(userAgent string) Option {
	return func(c *clientConfig) error { c.userAgent = userAgent; return nil }
}

// WithTeamID sends the X-Team-ID team selector.
func WithTeamID(teamID string) Option {
	return func(c *clientConfig) error { c.teamID = teamID; return nil }
}

// lane is one C client with its own cancel token. A call takes a lane for
// its duration, so cancelling one call's context fires only that call's
// token; lanes are reused, and freed by Close.
type lane struct {
	c   capi.Struct_SS_s0_client
	tok capi.Struct_SS_s0_cancel_token
}

// Client is a Sandbox0 API client: over HTTP(S) (NewClient) or over an
// embedded backend in process (Local.Client).
//
// A Client is safe for concurrent use by any number of goroutines. Every
// call takes a context.Context: cancelling it makes the call return
// ctx.Err() promptly (the C cancel token is fired), and no goroutine or C
// thread of the call outlives it. Close releases the C objects; a finalizer
// does it too if a Client is dropped unclosed. A nil or zero Client is not
// usable: its calls return ErrInvalidArgument.
type Client struct {
	core  *clientCore
	local *Local // keeps the embedded backend alive while the client is
}

type clientCore struct {
	// mu guards everything below; it is held only briefly (never across a
	// C call), so a call made from inside a predicate, or a Close made
	// there, can never block on it.
	mu       sync.Mutex
	cond     *sync.Cond // signalled when inflight or inPred change
	closed   bool       // Close began: new calls are refused
	freed    bool       // the lanes' C objects are freed
	inflight int        // calls between enter and leave
	inPred   int        // of them, calls running a Go predicate right now
	idle     []*lane
	all      []*lane
	onFreed  func() // run once, after the lanes are freed (Local's bookkeeping)

	newC    func(tok capi.Struct_SS_s0_cancel_token) (capi.Struct_SS_s0_client, error)
	baseURL string

	streams map[*stream]struct{} // open streams (each also counts in inflight; under mu)
}

// NewClient makes a client of an HTTP(S) Sandbox0 API. Without options it
// talks to DefaultBaseURL with no token. Bad options (empty base URL, a URL
// that is not http(s)://host[:port][/path], a non-positive timeout) are an
// *Error of kind ErrInvalidArgument. Close the client when done.
func NewClient(opts ...Option) (*Client, error) {
	return newHTTPClient(false, opts)
}

// NewClientFromEnv is NewClient configured from the environment like the
// official SDK examples: SANDBOX0_BASE_URL (default DefaultBaseURL), then
// SANDBOX0_TOKEN (else SANDBOX0_API_KEY). Options given win over the
// environment.
func NewClientFromEnv(opts ...Option) (*Client, error) {
	return newHTTPClient(true, opts)
}

func newHTTPClient(fromEnv bool, opts []Option) (*Client, error) {
	cfg := &clientConfig{}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(cfg); err != nil {
			return nil, err
		}
	}
	if err := noNUL(cfg.baseURL, cfg.token, cfg.userAgent, cfg.teamID); err != nil {
		return nil, err
	}
	timeoutMs := int64(0)
	if cfg.timeout > 0 {
		timeoutMs = durationMs(cfg.timeout)
	}
	newC := func(tok capi.Struct_SS_s0_cancel_token) (capi.Struct_SS_s0_client, error) {
		k := capi.S0go_call_new()
		defer capi.S0go_call_free(k)
		env := 0
		if fromEnv {
			env = 1
		}
		c := capi.S0go_client_new(k, env, cfg.baseURL, cfg.token, cfg.userAgent, cfg.teamID,
			timeoutMs, tok)
		if err := takeError(k); err != nil {
			return nil, err
		}
		return c, nil
	}
	return newClient(newC, nil)
}

func newClient(newC func(capi.Struct_SS_s0_cancel_token) (capi.Struct_SS_s0_client, error),
	local *Local) (*Client, error) {
	core := &clientCore{newC: newC}
	core.cond = sync.NewCond(&core.mu)
	l, err := core.newLane()
	if err != nil {
		return nil, err // configuration errors surface here, before any call
	}
	core.baseURL = capi.S0_client_base_url(l.c)
	core.idle = append(core.idle, l)
	c := &Client{core: core, local: local}
	runtime.SetFinalizer(c, func(c *Client) { c.Close() })
	return c, nil
}

// BaseURL is the normalised base URL (no trailing slash); for an embedded
// backend's client, "local:" followed by the data directory.
func (c *Client) BaseURL() string { return c.core.baseURL }

// Close cancels the client's calls in flight (they return promptly with an
// *Error of reason "closed"), waits for them, and frees every C object; new
// calls get that error too. Idempotent; safe from any goroutine, including
// from inside a WaitForSandboxLifecycle predicate: Close does not wait for
// calls that are running a predicate at that moment (one of them may be its
// caller), and the last of them frees the C objects as it returns.
func (c *Client) Close() error {
	if c == nil || c.core == nil {
		return nil // not made by NewClient or Local.Client: nothing to free
	}
	runtime.SetFinalizer(c, nil)
	c.core.close() // a Local's client leaves its set through onFreed
	return nil
}

func (core *clientCore) newLane() (*lane, error) {
	k := capi.S0go_call_new()
	defer capi.S0go_call_free(k)
	tok := capi.S0go_cancel_token_new(k)
	if err := takeError(k); err != nil {
		return nil, err
	}
	c, err := core.newC(tok)
	if err != nil {
		capi.S0_cancel_token_free(tok)
		return nil, err
	}
	l := &lane{c: c, tok: tok}
	core.mu.Lock()
	if core.closed {
		capi.S0_cancel_token_cancel(tok) // made by a call racing Close: it ends promptly
	}
	core.all = append(core.all, l)
	core.mu.Unlock()
	return l, nil
}

// enter registers a call; a closed client refuses it.
func (core *clientCore) enter() error {
	core.mu.Lock()
	defer core.mu.Unlock()
	if core.closed {
		return errClosed("client")
	}
	core.inflight++
	return nil
}

// leave ends a call registered by enter; the last call out of a closed
// client frees its C objects.
func (core *clientCore) leave() {
	core.mu.Lock()
	core.inflight--
	core.cond.Broadcast()
	free := core.closed && core.inflight == 0 && !core.freed
	if free {
		core.freeLocked()
	}
	core.mu.Unlock()
	if free && core.onFreed != nil {
		core.onFreed()
	}
}

// predicate marks a call of this client as running a Go predicate (delta
// +1 on entry, -1 on exit).
func (core *clientCore) predicate(delta int) {
	core.mu.Lock()
	core.inPred += delta
	core.cond.Broadcast()
	core.mu.Unlock()
}

func (core *clientCore) acquire() (*lane, error) {
	core.mu.Lock()
	if n := len(core.idle); n > 0 {
		l := core.idle[n-1]
		core.idle = core.idle[:n-1]
		core.mu.Unlock()
		return l, nil
	}
	core.mu.Unlock()
	return core.newLane()
}

func (core *clientCore) release(l *lane) {
	core.mu.Lock()
	defer core.mu.Unlock()
	if !core.closed && capi.S0_cancel_token_is_canceled(l.tok) {
		capi.S0_cancel_token_reset(l.tok) // a closing client's tokens stay fired
	}
	core.idle = append(core.idle, l)
}

// close fires every lane's token, closes the open streams, waits for the calls in flight that are
// not running a predicate, and frees the lanes if no call is left (else the
// last call out does.
func (core *clientCore) close() {
	core.mu.Lock()
	if !core.closed {
		core.closed = true
		for _, l := range core.all {
			capi.S0_cancel_token_cancel(l.tok) // in-flight calls return promptly
		}
	}
	streams := core.streams
	core.streams = nil
	core.mu.Unlock()
	for s := range streams {
		s.close() // gives its in-flight slot back
	}
	core.mu.Lock()
	for core.inflight > core.inPred {
		core.cond.Wait()
	}
	free := core.inflight == 0 && !core.freed
	if free {
		core.freeLocked()
	}
	core.mu.Unlock()
	if free && core.onFreed != nil {
		core.onFreed()
	}
}

func (core *clientCore) freeLocked() {
	core.freed = true
	for _, l := range core.all {
		capi.S0_client_free(l.c)
		capi.S0_cancel_token_free(l.tok)
	}
	core.all, core.idle = nil, nil
}

// addStream lists an open stream, so that close() closes it; false on a
// closed client (the caller frees the stream).
func (core *clientCore) addStream(s *stream) bool {
	core.mu.Lock()
	defer core.mu.Unlock()
	if core.closed {
		return false
	}
	if core.streams == nil {
		core.streams = map[*stream]struct{}{}
	}
	core.streams[s] = struct{}{}
	return true
}

// dropStream forgets a stream that was freed.
func (core *clientCore) dropStream(s *stream) {
	core.mu.Lock()
	delete(core.streams, s)
	core.mu.Unlock()
}

func (core *clientCore) isClosed() bool {
	core.mu.Lock()
	defer core.mu.Unlock()
	return core.closed
}

// takeError turns a call record's error into a Go error (nil on success)
// and frees the C error.
func takeError(k capi.Struct_SS_s0go_call) error {
	rc := capi.S0go_call_rc(k)
	if rc >= 0 {
		return nil
	}
	e := capi.S0go_call_take_error(k)
	defer capi.S0_error_free(e)
	return convertError(rc, e)
}

// waitInfo describes a wait call, for turning a cancel caused by the
// context's deadline into a *SandboxWaitTimeoutError.
type waitInfo struct {
	sandboxID   string
	budget      time.Duration
	ctxDeadline bool
}

// do runs one C call on a lane with the context wired to the lane's cancel
// token. f receives the lane's C client and a fresh call record; objects f
// reads from the record must be converted to Go values inside f.
func (c *Client) do(ctx context.Context, w *waitInfo,
	f func(cc capi.Struct_SS_s0_client, tok capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call)) error {
	if c == nil || c.core == nil {
		return invalid("the Client is nil or was not made by NewClient, NewClientFromEnv or Local.Client")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		if w != nil && err == context.DeadlineExceeded {
			// as when the deadline passes mid-wait
			return &SandboxWaitTimeoutError{SandboxID: w.sandboxID, Timeout: w.budget,
				ContextDeadline: true}
		}
		return err
	}
	core := c.core
	if err := core.enter(); err != nil {
		return err
	}
	defer core.leave()
	l, err := core.acquire()
	if err != nil {
		return err
	}
	k := capi.S0go_call_new()
	defer capi.S0go_call_free(k)
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		capi.S0_cancel_token_cancel(l.tok)
		close(fired)
	})
	f(l.c, l.tok, k)
	if !stop() {
		<-fired // the cancel ran: wait for it so nothing outlives the call
	}
	runtime.KeepAlive(c)
	core.release(l)
	rc := capi.S0go_call_rc(k)
	if rc >= 0 {
		return nil
	}
	e := capi.S0go_call_take_error(k)
	defer capi.S0_error_free(e)
	err = convertError(rc, e)
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ErrCanceled) {
		if w != nil && ctxErr == context.DeadlineExceeded {
			// The context's deadline won the race with the C wait's own
			// (same budget): the cancelled wait still carries its last
			// observation.
			te := &SandboxWaitTimeoutError{SandboxID: w.sandboxID, Timeout: w.budget,
				ContextDeadline: true}
			if e != nil && e.Swigcptr() != 0 {
				if ls := capi.S0_error_last_sandbox(e); ls != nil && ls.Swigcptr() != 0 {
					te.LastSandbox = sandboxFromC(ls)
				}
			}
			return te
		}
		return ctxErr
	}
	if errors.Is(err, ErrCanceled) && core.isClosed() {
		return errClosed("client") // ended by Close, not by its context
	}
	if w != nil && w.ctxDeadline {
		var te *SandboxWaitTimeoutError
		if errors.As(err, &te) {
			te.ContextDeadline = true
		}
	}
	return err
}

// durationMs converts a non-negative duration to whole milliseconds,
// rounding up (without overflowing near math.MaxInt64).
func durationMs(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond > 0 {
		ms++
	}
	return ms
}
