package sandbox0

import (
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// LocalOptions configures OpenLocal; zero fields take the defaults given.
type LocalOptions struct {
	// ManualClock runs the backend on its own manual clock starting at
	// ManualClockStart (zero = now, never earlier than the data directory
	// recorded): time moves only through AdvanceClock and through waits of
	// its clients, which advance it virtually. For tests.
	ManualClock      bool
	ManualClockStart time.Time
	NodeCPUMillis    int64  // node CPU capacity in millicores; 0 = 8000
	NodeMemoryBytes  int64  // node memory capacity; 0 = 16 GiB
	WarmCarriers     int32  // warm carrier pool size; 0 = 16
	MaxActive        int32  // team quota of running sandboxes; 0 = 64
	RootFSSizeBytes  uint64 // default template's RootFS size; 0 = 1 GiB (sparse)
	TeamID           string // team of its clients; "" = "team_local"
	// DisableMemoryCheckpoints makes a deployment without memory
	// checkpoints: a memory pause answers 503 unavailable.
	DisableMemoryCheckpoints bool
	MemoryImageLimitBytes    uint64 // largest memory image admitted; 0 = 2 GiB
}

// Local is the embedded local reference backend: the Sandbox0 server side
// in process (durable lifecycle engine, copy-on-write RootFS, simulated
// runtime, faults, manual clock, inspection), so Go programs test offline
// in milliseconds. Safe for concurrent use. Close it when done (its
// clients are closed with it); a finalizer does it too if it is dropped.
type Local struct {
	// The state lives apart from the finalized handle: the clients' lane
	// constructors reference it, and a reference cycle through an object
	// with a finalizer would never be collected.
	*localState
}

type localState struct {
	// mu guards the fields below and is never held across a C call, so
	// Close and the other methods may be called from inside a predicate.
	mu      sync.Mutex
	cond    *sync.Cond // signalled when calls drops
	l       capi.Struct_SS_s0_local
	dir     string
	closed  bool                     // Close began
	calls   int                      // Local methods (and lane makers) using l right now
	clients map[*clientCore]struct{} // clients whose C objects are not freed yet
}

// state is lb's state, nil for a nil Local.
func (lb *Local) state() *localState {
	if lb == nil {
		return nil
	}
	return lb.localState
}

// use registers a user of the C backend; a closed backend refuses it.
func (st *localState) use() (capi.Struct_SS_s0_local, error) {
	if st == nil {
		return nil, invalid("the Local is nil or was not made by OpenLocal")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return nil, errClosed("local backend")
	}
	st.calls++
	return st.l, nil
}

// done ends a use; the last user of a closed backend closes it.
func (st *localState) done() {
	st.mu.Lock()
	st.calls--
	st.cond.Broadcast()
	st.mu.Unlock()
	st.maybeFree()
}

// maybeFree closes the C backend once Close began and neither a Local
// method nor a client's C objects use it any more.
func (st *localState) maybeFree() {
	st.mu.Lock()
	l := st.l
	free := st.closed && st.calls == 0 && len(st.clients) == 0 && l != nil
	if free {
		st.l = nil
	}
	st.mu.Unlock()
	if free {
		capi.S0_local_close(l)
	}
}

// OpenLocal opens (creating if needed) a backend on the data directory dir
// (created 0700). Only one opener per directory: a second one gets an
// *Error of kind ErrConflict, reason "data_dir_locked". ErrIO when the
// directory or its stores cannot be used.
func OpenLocal(dir string, opts *LocalOptions) (*Local, error) {
	if dir == "" {
		return nil, invalid("data directory is required")
	}
	var o LocalOptions
	if opts != nil {
		o = *opts
	}
	if err := noNUL(dir, o.TeamID); err != nil {
		return nil, err
	}
	manual, start, nomem := 0, int64(0), 0
	if o.ManualClock {
		manual = 1
		if !o.ManualClockStart.IsZero() {
			start = o.ManualClockStart.UnixMilli()
		}
	}
	if o.DisableMemoryCheckpoints {
		nomem = 1
	}
	k := capi.S0go_call_new()
	defer capi.S0go_call_free(k)
	l := capi.S0go_local_open(k, dir, manual, start, o.NodeCPUMillis, o.NodeMemoryBytes,
		int(o.WarmCarriers), int(o.MaxActive), o.RootFSSizeBytes, o.TeamID, nomem,
		o.MemoryImageLimitBytes)
	if err := takeError(k); err != nil {
		return nil, err
	}
	st := &localState{l: l, dir: dir, clients: map[*clientCore]struct{}{}}
	st.cond = sync.NewCond(&st.mu)
	lb := &Local{st}
	runtime.SetFinalizer(lb, func(lb *Local) { lb.Close() })
	return lb, nil
}

// Dir is the data directory.
func (lb *Local) Dir() string { return lb.dir }

// Close closes every client made by Client (their calls in flight return
// promptly with the closed error), lets in-flight operations reach a
// durable point and closes the backend, releasing its directory.
// Idempotent. Safe from inside a predicate of one of its clients: the
// backend then closes when that call has returned.
func (lb *Local) Close() error {
	if lb == nil || lb.localState == nil {
		return nil // not made by OpenLocal: nothing to close
	}
	runtime.SetFinalizer(lb, nil)
	st := lb.localState
	st.mu.Lock()
	st.closed = true
	cores := make([]*clientCore, 0, len(st.clients))
	for c := range st.clients {
		cores = append(cores, c)
	}
	st.mu.Unlock()
	for _, c := range cores {
		c.close() // frees now, or when its last call (in a predicate) returns
	}
	st.mu.Lock()
	for st.calls > 0 {
		st.cond.Wait() // Local methods are short C calls with no callback
	}
	st.mu.Unlock()
	st.maybeFree()
	return nil
}

// forget drops a client whose C objects were freed.
func (st *localState) forget(c *clientCore) {
	st.mu.Lock()
	delete(st.clients, c)
	st.mu.Unlock()
	st.maybeFree()
}

// Client makes a client over the backend in process (no sockets): every
// endpoint, wait and error behaves as over HTTP, and waits run on the
// backend's clock. Options other than WithUserAgent are ignored. Close the
// client when done (Local.Close closes it too).
func (lb *Local) Client(opts ...Option) (*Client, error) {
	cfg := &clientConfig{}
	for _, o := range opts {
		if o != nil {
			if err := o(cfg); err != nil {
				return nil, err
			}
		}
	}
	if err := noNUL(cfg.userAgent); err != nil {
		return nil, err
	}
	if lb == nil {
		return nil, invalid("the Local is nil or was not made by OpenLocal")
	}
	st := lb.localState
	if _, err := st.use(); err != nil {
		return nil, err
	}
	defer st.done()
	newC := func(tok capi.Struct_SS_s0_cancel_token) (capi.Struct_SS_s0_client, error) {
		// A lane is made inside Client (which holds a use) or during a
		// call of an unfreed client (which is in st.clients): either
		// keeps the C backend open.
		st.mu.Lock()
		l := st.l
		st.mu.Unlock()
		if l == nil {
			return nil, errClosed("local backend")
		}
		k := capi.S0go_call_new()
		defer capi.S0go_call_free(k)
		c := capi.S0go_client_new_local(k, l, cfg.userAgent, tok)
		if err := takeError(k); err != nil {
			return nil, err
		}
		return c, nil
	}
	c, err := newClient(newC, lb)
	if err != nil {
		return nil, err
	}
	core := c.core // not c: the set must not keep the finalized Client alive
	core.onFreed = func() { st.forget(core) }
	st.mu.Lock()
	closed := st.closed
	st.clients[core] = struct{}{}
	st.mu.Unlock()
	if closed {
		c.Close()
		return nil, errClosed("local backend")
	}
	return c, nil
}

// call runs f on the open backend with a call record and returns its error.
func (lb *Local) call(f func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local)) error {
	st := lb.state()
	l, err := st.use()
	if err != nil {
		return err
	}
	defer st.done()
	k := capi.S0go_call_new()
	defer capi.S0go_call_free(k)
	f(k, l)
	return takeError(k)
}

// FaultMode is how an armed fault point behaves.
type FaultMode int32

// Fault modes (s0_fault_mode).
const (
	FaultFail  FaultMode = 1 // the next Count hits fail
	FaultHold  FaultMode = 2 // hits block (or stay pending) until released
	FaultDelay FaultMode = 3 // hits wait Delay on the backend clock
	FaultCrash FaultMode = 4 // the process raises SIGKILL at the point
)

// ArmFault arms a named fault point (docs/behaviours.md's stand-in table, e.g.
// "capture@commit", "node_channel@pause"); count 0 = until released; delay
// for FaultDelay, on the backend clock. ErrInvalidArgument for an unknown
// mode, a negative count or delay. Names are not checked (the library arms
// any name; local.h promises EINVAL): a misspelt name is armed and never
// hit, so check Inspect's "faults" when in doubt.
func (lb *Local) ArmFault(name string, mode FaultMode, count int64, delay time.Duration) error {
	if err := noNUL(name); err != nil {
		return err
	}
	if delay < 0 {
		return invalid("fault delay must be >= 0, got %s", delay)
	}
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_fault_arm(k, l, name, int(mode), count, durationMs(delay))
	})
}

// ReleaseFault disarms a fault point and releases what it holds (unknown
// names are fine).
func (lb *Local) ReleaseFault(name string) error {
	if err := noNUL(name); err != nil {
		return err
	}
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_fault_release(k, l, name)
	})
}

// AdvanceClock moves the manual clock forward by d and runs the
// controllers that became due (TTL pauses, hard-TTL deletes…).
// ErrUnsupported without LocalOptions.ManualClock.
func (lb *Local) AdvanceClock(d time.Duration) error {
	if d < 0 {
		return invalid("clock advance must be >= 0, got %s", d)
	}
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_clock_advance(k, l, durationMs(d))
	})
}

// Now is the backend clock's current time.
func (lb *Local) Now() time.Time {
	st := lb.state()
	l, err := st.use()
	if err != nil {
		return time.Time{}
	}
	defer st.done()
	return time.UnixMilli(capi.S0_local_now_unix_ms(l)).UTC()
}

// Quiesce waits, in real time up to timeout, until no background operation
// is runnable. ErrTimeout when work was still running; ErrInvalidArgument
// for a negative timeout.
func (lb *Local) Quiesce(timeout time.Duration) error {
	if timeout < 0 {
		return invalid("quiesce timeout must be >= 0, got %s", timeout)
	}
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_quiesce(k, l, durationMs(timeout))
	})
}

// RestartManager simulates a manager restart: lifecycle state is dropped
// and reloaded from the metadata store while runtimes survive.
func (lb *Local) RestartManager() error {
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_restart_manager(k, l)
	})
}

// GC frees every block no head, snapshot, template, fork or in-flight
// publication needs.
func (lb *Local) GC() error {
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_gc(k, l)
	})
}

// Inspect returns internal facts as decoded JSON (capacity and leases,
// operations, generations, memory images, runtimes…); sandboxID ""
// covers every sandbox.
func (lb *Local) Inspect(sandboxID string) (map[string]any, error) {
	if err := noNUL(sandboxID); err != nil {
		return nil, err
	}
	var raw []byte
	err := lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_inspect(k, l, sandboxID)
		raw = capi.S0go_call_data(k)
	})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, &Error{Kind: ErrProtocol, Reason: "inspect", Message: err.Error()}
	}
	return out, nil
}

// TemplateOptions configures BuildTemplate.
type TemplateOptions struct {
	SizeBytes       uint64   // RootFS size; 0 = the backend default
	EphemeralMounts []string // runtime-only mount paths
}

// BuildTemplate builds (or rebuilds) template name from directory dir (""
// = the standard empty tree) and makes it claimable; existing sandboxes
// keep their heads. ErrInvalidArgument for a bad name; ErrIO when mke2fs or
// the store fails.
func (lb *Local) BuildTemplate(name, dir string, opts *TemplateOptions) error {
	var o TemplateOptions
	if opts != nil {
		o = *opts
	}
	if err := noNUL(name, dir); err != nil {
		return err
	}
	for _, m := range o.EphemeralMounts {
		if m == "" || strings.ContainsAny(m, "\n\x00") {
			return invalid("ephemeral mount %q is not a path", m)
		}
	}
	return lb.call(func(k capi.Struct_SS_s0go_call, l capi.Struct_SS_s0_local) {
		capi.S0go_local_template_build(k, l, name, dir, o.SizeBytes, strings.Join(o.EphemeralMounts, "\n"))
	})
}

// LiveObjects is the number of libsandbox0 C objects (clients, results,
// errors, backends…) alive in this process; tests use it to prove nothing leaks.
func LiveObjects() int64 { return capi.S0_live_objects() }

// Version is the linked library's version string, e.g. "0.1.0".
func Version() string { return capi.S0_version_string() }
