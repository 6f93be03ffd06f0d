// Package facade is a UCloud/E2B-style facade over the sandbox0 client
// (UC-01..UC-16), in Go's idiom:
//
//	sbx, err := facade.Create(ctx, client, &facade.CreateOptions{
//		Timeout:   10 * time.Minute,
//		Lifecycle: facade.Lifecycle{OnTimeout: facade.OnTimeoutPause},
//	})
//	err = sbx.Pause(ctx)                             // memory pause, waits until paused
//	same, err := facade.Connect(ctx, client, sbx.ID(), time.Minute)
//	err = same.Kill(ctx)                             // or facade.Kill(ctx, client, id)
//
// How it maps onto Sandbox0 (docs/wire.md §6.10, behaviours UC-01..UC-12):
//
//   - Create with OnTimeout "kill" (the default) claims with ttl 0 and
//     hard_ttl = Timeout: at the timeout the sandbox is deleted; "pause"
//     claims with ttl = Timeout and hard_ttl 0: every timeout pauses it
//     (filesystem-only) and a paused sandbox is kept until killed. Timeout
//     defaults to 300 s, the template to "default"; auto_resume (default
//     false) is always sent.
//   - Pause is a memory pause waited for up to 360 s; a capture failure
//     (*sandbox0.SandboxLifecycleFailedError) or a deployment without
//     memory checkpoints (ErrUnavailable) is returned, never a filesystem
//     pause instead. A kill-on-timeout sandbox has its hard deadline cleared
//     once paused (paused sandboxes stay until killed).
//   - Connect resumes a paused sandbox with memory and waits (360 s), then
//     resets the timeout: a refresh for pause-on-timeout sandboxes, an
//     update of hard_ttl for kill-on-timeout ones.
//   - Kill deletes; killing an unknown or killed id is ErrNotFound.
//   - States: Running = running/starting; Paused = paused; Killed = 404 or
//     terminating; Snapshotting has no wire state.
//
// Every function takes the client explicitly and blocks for its requests;
// all are safe for concurrent use on one client.
package facade

import (
	"context"
	"errors"
	"math"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Defaults of the facade.
const (
	DefaultTimeout   = 300 * time.Second // UCloud's default sandbox timeout
	MemoryWait       = 360 * time.Second // budget of the memory pause/resume waits
	DefaultTemplate  = "default"
	DefaultPageLimit = 100
)

// OnTimeout is what happens at a sandbox's timeout.
type OnTimeout string

// Timeout actions.
const (
	OnTimeoutKill  OnTimeout = "kill"
	OnTimeoutPause OnTimeout = "pause"
)

// Lifecycle is the lifecycle{on_timeout, auto_resume} of Create.
type Lifecycle struct {
	OnTimeout  OnTimeout // "" = kill
	AutoResume bool
}

// CreateOptions configures Create; nil means every default.
type CreateOptions struct {
	Template  string        // "" = "default"
	Timeout   time.Duration // 0 = 300 s; whole seconds, rounded up
	Lifecycle Lifecycle
	Envs      map[string]string // environment of new processes
}

// State is a UCloud-style sandbox state.
type State string

// The states (UC-06).
const (
	StateRunning      State = "running"
	StatePaused       State = "paused"
	StateSnapshotting State = "snapshotting"
	StateKilled       State = "killed"
)

// StateOf maps a sandbox (nil = gone, 404) to a State.
func StateOf(sb *sandbox0.Sandbox) State {
	switch {
	case sb == nil:
		return StateKilled
	case sb.Paused || sb.Status == sandbox0.SandboxStatusPaused:
		return StatePaused
	case sb.Status == sandbox0.SandboxStatusTerminating:
		return StateKilled
	default:
		return StateRunning
	}
}

func invalid(msg string) error {
	return &sandbox0.Error{Kind: sandbox0.ErrInvalidArgument, Reason: "invalid_argument", Message: msg}
}

func seconds(d time.Duration, name string) (int32, error) {
	if d == 0 {
		d = DefaultTimeout
	}
	s := math.Ceil(d.Seconds())
	if d < 0 || s > math.MaxInt32 {
		return 0, invalid(name + " must be a positive duration of at most 2^31-1 seconds")
	}
	return int32(s), nil
}

// Sandbox is a facade handle: an id and the client it uses.
type Sandbox struct {
	id     string
	client *sandbox0.Client
}

// ID is the sandbox id.
func (s *Sandbox) ID() string { return s.id }

// Client is the client the handle uses.
func (s *Sandbox) Client() *sandbox0.Client { return s.client }

// Create claims a sandbox and returns it Running (waiting for starting to
// end). ErrInvalidArgument for a bad timeout or lifecycle; the claim's
// errors (ErrQuotaExceeded, ErrUnavailable, ErrNotFound…) otherwise.
func Create(ctx context.Context, client *sandbox0.Client, opts *CreateOptions) (*Sandbox, error) {
	var o CreateOptions
	if opts != nil {
		o = *opts
	}
	t, err := seconds(o.Timeout, "timeout")
	if err != nil {
		return nil, err
	}
	cfg := sandbox0.SandboxConfig{AutoResume: &o.Lifecycle.AutoResume, EnvVars: o.Envs}
	var zero int32
	switch o.Lifecycle.OnTimeout {
	case "", OnTimeoutKill:
		cfg.TTL, cfg.HardTTL = &zero, &t
	case OnTimeoutPause:
		cfg.TTL, cfg.HardTTL = &t, &zero
	default:
		return nil, invalid(`lifecycle on_timeout must be "pause" or "kill"`)
	}
	template := o.Template
	if template == "" {
		template = DefaultTemplate
	}
	sb, err := client.ClaimSandbox(ctx, template, sandbox0.WithSandboxConfig(cfg))
	if err != nil {
		return nil, err
	}
	if sb.Status != sandbox0.SandboxStatusRunning {
		if _, err := client.WaitForSandboxLifecycle(ctx, sb.ID, func(s *sandbox0.Sandbox) bool {
			return s.Status == sandbox0.SandboxStatusRunning
		}, nil); err != nil {
			return nil, err
		}
	}
	return &Sandbox{id: sb.ID, client: client}, nil
}

// Connect connects to a sandbox by id: a paused (or failed) one is resumed
// with memory (waiting up to 360 s); then its timeout is reset to timeout
// (0 = 300 s). ErrNotFound for a killed or unknown id; the resume's errors.
func Connect(ctx context.Context, client *sandbox0.Client, sandboxID string, timeout time.Duration) (*Sandbox, error) {
	t, err := seconds(timeout, "timeout")
	if err != nil {
		return nil, err
	}
	sb, err := client.GetSandbox(ctx, sandboxID)
	if err != nil {
		return nil, err
	}
	switch {
	case sb.Paused || sb.Status == sandbox0.SandboxStatusPaused || sb.Status == sandbox0.SandboxStatusFailed:
		sb, err = client.ResumeSandboxAndWait(ctx, sandboxID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true, Timeout: MemoryWait})
	case sb.Status == sandbox0.SandboxStatusStarting:
		sb, err = client.WaitForSandboxLifecycle(ctx, sandboxID, func(s *sandbox0.Sandbox) bool {
			return s.Status == sandbox0.SandboxStatusRunning
		}, nil)
	}
	if err != nil {
		return nil, err
	}
	if err := resetTimeout(ctx, client, sb, t); err != nil {
		return nil, err
	}
	return &Sandbox{id: sandboxID, client: client}, nil
}

// resetTimeout re-arms the timeout: an update of hard_ttl for
// kill-on-timeout sandboxes (a hard deadline and no soft one, or running
// without a soft one), a refresh otherwise (UC-04, UC-11).
func resetTimeout(ctx context.Context, c *sandbox0.Client, sb *sandbox0.Sandbox, t int32) error {
	if sb.ExpiresAt.IsZero() && (!sb.HardExpiresAt.IsZero() || !sb.Paused) {
		_, err := c.UpdateSandbox(ctx, sb.ID, sandbox0.SandboxUpdateRequest{Config: sandbox0.SandboxConfig{HardTTL: &t}})
		return err
	}
	_, err := c.RefreshSandbox(ctx, sb.ID, &sandbox0.SandboxRefreshRequest{Duration: t})
	return err
}

// Pause is Sandbox.Pause by id.
func Pause(ctx context.Context, client *sandbox0.Client, sandboxID string) error {
	before, err := client.GetSandbox(ctx, sandboxID)
	if err != nil {
		return err
	}
	killMode := !before.HardExpiresAt.IsZero() && before.ExpiresAt.IsZero()
	if _, err := client.PauseSandboxAndWait(ctx, sandboxID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true, Timeout: MemoryWait}); err != nil {
		return err
	}
	if killMode {
		var zero int32
		_, err = client.UpdateSandbox(ctx, sandboxID, sandbox0.SandboxUpdateRequest{Config: sandbox0.SandboxConfig{HardTTL: &zero}})
	}
	return err
}

// Pause pauses with memory and waits until paused (up to 360 s).
// ErrUnavailable when memory checkpoints are unavailable (the sandbox keeps
// running; no fallback); *sandbox0.SandboxLifecycleFailedError when the
// capture failed; *sandbox0.SandboxWaitTimeoutError past 360 s.
func (s *Sandbox) Pause(ctx context.Context) error { return Pause(ctx, s.client, s.id) }

// Kill is Sandbox.Kill by id.
func Kill(ctx context.Context, client *sandbox0.Client, sandboxID string) error {
	return client.DeleteSandbox(ctx, sandboxID)
}

// Kill deletes the sandbox permanently (running or paused); ErrNotFound
// when already killed.
func (s *Sandbox) Kill(ctx context.Context) error { return Kill(ctx, s.client, s.id) }

// SetTimeout resets the timeout to timeout from now (as Connect does).
func (s *Sandbox) SetTimeout(ctx context.Context, timeout time.Duration) error {
	t, err := seconds(timeout, "timeout")
	if err != nil {
		return err
	}
	sb, err := s.client.GetSandbox(ctx, s.id)
	if err != nil {
		return err
	}
	return resetTimeout(ctx, s.client, sb, t)
}

// Info is a sandbox as listed by List or GetInfo.
type Info struct {
	SandboxID  string
	TemplateID string
	State      State
	StartedAt  time.Time         // creation time
	EndAt      time.Time         // when the timeout acts (soft expiry, else hard), zero = never
	Sandbox    *sandbox0.Sandbox // the full wire view
}

func infoOf(sb *sandbox0.Sandbox) Info {
	end := sb.ExpiresAt
	if end.IsZero() {
		end = sb.HardExpiresAt
	}
	return Info{SandboxID: sb.ID, TemplateID: sb.Template, State: StateOf(sb),
		StartedAt: sb.CreatedAt, EndAt: end, Sandbox: sb}
}

// GetInfo returns the current state; ErrNotFound once killed.
func (s *Sandbox) GetInfo(ctx context.Context) (Info, error) {
	sb, err := s.client.GetSandbox(ctx, s.id)
	if err != nil {
		return Info{}, err
	}
	return infoOf(sb), nil
}

// State is the current state; StateKilled once the sandbox is gone.
func (s *Sandbox) State(ctx context.Context) (State, error) {
	sb, err := s.client.GetSandbox(ctx, s.id)
	if errors.Is(err, sandbox0.ErrNotFound) {
		return StateKilled, nil
	}
	if err != nil {
		return "", err
	}
	return StateOf(sb), nil
}

// IsRunning reports State == StateRunning.
func (s *Sandbox) IsRunning(ctx context.Context) (bool, error) {
	st, err := s.State(ctx)
	return st == StateRunning, err
}

// CreateSnapshot makes a named RootFS snapshot (filesystem only); a
// running sandbox stays Running.
func (s *Sandbox) CreateSnapshot(ctx context.Context, name, description string) (*sandbox0.SandboxRootFSSnapshot, error) {
	return s.client.CreateSandboxRootFSSnapshot(ctx, s.id, &sandbox0.CreateSandboxRootFSSnapshotRequest{Name: name, Description: description})
}
