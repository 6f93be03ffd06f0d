package sandbox0

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// C tri-state booleans (S0_BOOL_*).
const (
	boolUnset = 0
	boolTrue  = 1
	boolFalse = 2
)

func triBool(b *bool) int {
	switch {
	case b == nil:
		return boolUnset
	case *b:
		return boolTrue
	default:
		return boolFalse
	}
}

// SandboxConfig is the sandbox configuration sent on claim and update. Nil
// and empty fields are not sent.
type SandboxConfig struct {
	TTL        *int32 // soft TTL in seconds (0 disables): at expiry the sandbox pauses
	HardTTL    *int32 // hard TTL in seconds (0 disables): at expiry it is deleted
	AutoResume *bool  // wake on runtime access while paused (server default true)
	Memory     string // resources.memory, e.g. "512Mi"
	EnvVars    map[string]string
	// Network is the SandboxNetworkPolicy (any JSON-marshalable value, e.g.
	// NetworkPolicy or json.RawMessage).
	Network any
	// Extra holds any other config member (services, webhook, lifecycle…),
	// marshalled as is; the typed fields above win.
	Extra map[string]any
}

// cArgs gives the s0_sandbox_config fields: the set bits, TTLs, auto-resume,
// memory and the JSON of the members the C struct does not type.
func (cfg *SandboxConfig) cArgs() (set uint, ttl, hard, auto int, memory, extra string, err error) {
	if cfg == nil {
		return
	}
	if cfg.TTL != nil {
		set |= 1
		ttl = int(*cfg.TTL)
	}
	if cfg.HardTTL != nil {
		set |= 2
		hard = int(*cfg.HardTTL)
	}
	if (cfg.TTL != nil && *cfg.TTL < 0) || (cfg.HardTTL != nil && *cfg.HardTTL < 0) {
		err = invalid("ttl and hard ttl must be >= 0 seconds")
		return
	}
	auto = triBool(cfg.AutoResume)
	memory = cfg.Memory
	m := map[string]any{}
	for k, v := range cfg.Extra {
		m[k] = v
	}
	if cfg.EnvVars != nil {
		m["env_vars"] = cfg.EnvVars
	}
	if cfg.Network != nil {
		m["network"] = cfg.Network
	}
	if len(m) > 0 {
		var b []byte
		if b, err = json.Marshal(m); err != nil {
			err = invalid("config: %v", err)
			return
		}
		extra = string(b)
	}
	return
}

type sandboxOptions struct {
	config     SandboxConfig
	hasConfig  bool
	snapshotID string
}

// SandboxOption configures ClaimSandbox.
type SandboxOption func(*sandboxOptions)

// WithSandboxConfig sets the whole configuration (later options amend it).
func WithSandboxConfig(cfg SandboxConfig) SandboxOption {
	return func(o *sandboxOptions) { o.config, o.hasConfig = cfg, true }
}

// WithSandboxSnapshotID initialises the RootFS from a snapshot.
func WithSandboxSnapshotID(snapshotID string) SandboxOption {
	return func(o *sandboxOptions) { o.snapshotID = snapshotID }
}

// WithSandboxTTL sets the soft TTL in seconds.
func WithSandboxTTL(ttl int32) SandboxOption {
	return func(o *sandboxOptions) { o.config.TTL, o.hasConfig = &ttl, true }
}

// WithSandboxHardTTL sets the hard TTL in seconds.
func WithSandboxHardTTL(ttl int32) SandboxOption {
	return func(o *sandboxOptions) { o.config.HardTTL, o.hasConfig = &ttl, true }
}

// WithSandboxMemory sets resources.memory (e.g. "512Mi").
func WithSandboxMemory(memory string) SandboxOption {
	return func(o *sandboxOptions) { o.config.Memory, o.hasConfig = memory, true }
}

// WithSandboxAutoResume sets auto_resume.
func WithSandboxAutoResume(autoResume bool) SandboxOption {
	return func(o *sandboxOptions) { o.config.AutoResume, o.hasConfig = &autoResume, true }
}

// WithSandboxEnvVars sets the environment variables.
func WithSandboxEnvVars(env map[string]string) SandboxOption {
	return func(o *sandboxOptions) { o.config.EnvVars, o.hasConfig = env, true }
}

// WithSandboxNetworkPolicy sets the network policy (any JSON-marshalable value).
func WithSandboxNetworkPolicy(policy any) SandboxOption {
	return func(o *sandboxOptions) { o.config.Network, o.hasConfig = policy, true }
}

// ClaimSandbox claims a new sandbox from a template ("default" is the
// documented default) with POST /api/v1/sandboxes. The returned Sandbox is
// also a handle for files and contexts. Errors: ErrInvalidArgument (empty
// template, bad config), ErrNotFound (template or snapshot), ErrConflict
// (template_not_ready), ErrQuotaExceeded/ErrThrottled (429),
// ErrUnavailable; no sandbox exists after an error.
func (c *Client) ClaimSandbox(ctx context.Context, template string, opts ...SandboxOption) (*Sandbox, error) {
	o := &sandboxOptions{}
	for _, f := range opts {
		if f != nil {
			f(o)
		}
	}
	if template == "" {
		return nil, invalid("template is required")
	}
	if err := noNUL(template, o.snapshotID); err != nil {
		return nil, err
	}
	set, ttl, hard, auto, memory, extra, err := o.config.cArgs()
	if err != nil {
		return nil, err
	}
	has := 0
	if o.hasConfig {
		has = 1
	}
	var out *Sandbox
	err = c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_sandbox_claim(k, cc, template, o.snapshotID, has, set, ttl, hard, auto,
			memory, extra)
		out = takeSandbox(p, c)
	})
	return out, err
}

// Sandbox returns a handle for a known sandbox id (no request is sent).
func (c *Client) Sandbox(id string) *Sandbox {
	return &Sandbox{ID: id, client: c}
}

func (c *Client) sandboxCall(ctx context.Context, id string,
	f func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info) (*Sandbox, error) {
	if id == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(id); err != nil {
		return nil, err
	}
	var out *Sandbox
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		out = takeSandbox(f(k, cc), c)
	})
	return out, err
}

// GetSandbox reads a sandbox (GET /api/v1/sandboxes/{id}). ErrNotFound when
// unknown, deleted, hard-expired or another team's.
func (c *Client) GetSandbox(ctx context.Context, sandboxID string) (*Sandbox, error) {
	return c.sandboxCall(ctx, sandboxID, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info {
		return capi.S0go_sandbox_get(k, cc, sandboxID)
	})
}

// StatusSandbox reads the short status (GET …/{id}/status): id, template,
// team, status and timestamps (Paused and RuntimeGeneration are not part of it).
func (c *Client) StatusSandbox(ctx context.Context, sandboxID string) (*Sandbox, error) {
	return c.sandboxCall(ctx, sandboxID, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info {
		return capi.S0go_sandbox_status(k, cc, sandboxID)
	})
}

// SandboxUpdateRequest is the body of UpdateSandbox.
type SandboxUpdateRequest struct {
	Config SandboxConfig
}

// UpdateSandbox changes the durable configuration (PUT /api/v1/sandboxes/{id});
// a sent TTL re-arms the expiry. ErrInvalidArgument (400, e.g. ttl >
// hard_ttl) leaves it unchanged.
func (c *Client) UpdateSandbox(ctx context.Context, sandboxID string, request SandboxUpdateRequest) (*Sandbox, error) {
	set, ttl, hard, auto, memory, extra, err := request.Config.cArgs()
	if err != nil {
		return nil, err
	}
	return c.sandboxCall(ctx, sandboxID, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info {
		return capi.S0go_sandbox_update(k, cc, sandboxID, set, ttl, hard, auto, memory, extra)
	})
}

// DeleteSandbox deletes a sandbox (identity, configuration, writable
// RootFS; named snapshots stay). ErrNotFound when unknown or already deleted.
func (c *Client) DeleteSandbox(ctx context.Context, sandboxID string) error {
	if sandboxID == "" {
		return invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID); err != nil {
		return err
	}
	return c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		capi.S0go_sandbox_delete(k, cc, sandboxID)
	})
}

// SandboxExecutionStateOptions selects memory mode for the *WithOptions
// lifecycle calls; they always send {"memory": Memory}, false included.
type SandboxExecutionStateOptions struct {
	Memory bool
}

func (o *SandboxExecutionStateOptions) tri() int {
	if o == nil {
		return boolUnset
	}
	if o.Memory {
		return boolTrue
	}
	return boolFalse
}

func (c *Client) lifecycleCall(ctx context.Context, id string, resume bool, memory int) (*LifecycleResult, error) {
	if id == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(id); err != nil {
		return nil, err
	}
	var out *LifecycleResult
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		var p capi.Struct_SS_s0_lifecycle_result
		if resume {
			p = capi.S0go_sandbox_resume(k, cc, id, memory)
		} else {
			p = capi.S0go_sandbox_pause(k, cc, id, memory)
		}
		if p != nil && p.Swigcptr() != 0 {
			out = takeLifecycle(p)
		}
	})
	return out, err
}

// PauseSandbox sends one filesystem-only pause with no body (POST
// …/pause). 200 and 202 both mean accepted; Paused is true only once
// committed. It does not wait: see PauseSandboxAndWait.
func (c *Client) PauseSandbox(ctx context.Context, sandboxID string) (*PauseSandboxResponse, error) {
	return c.lifecycleCall(ctx, sandboxID, false, boolUnset)
}

// PauseSandboxWithOptions sends one pause with body {"memory": options.Memory}
// (nil options: no body, like PauseSandbox). A memory pause on a
// deployment without checkpoints is ErrUnavailable and the sandbox keeps
// running; it is never downgraded to a filesystem pause.
func (c *Client) PauseSandboxWithOptions(ctx context.Context, sandboxID string, options *SandboxExecutionStateOptions) (*PauseSandboxResponse, error) {
	return c.lifecycleCall(ctx, sandboxID, false, options.tri())
}

// ResumeSandbox sends one resume with no body (POST …/resume). Resumed
// false means accepted durable work that goes on: poll, or use
// ResumeSandboxAndWait.
func (c *Client) ResumeSandbox(ctx context.Context, sandboxID string) (*ResumeSandboxResponse, error) {
	return c.lifecycleCall(ctx, sandboxID, true, boolUnset)
}

// ResumeSandboxWithOptions sends one resume with body {"memory": options.Memory}.
func (c *Client) ResumeSandboxWithOptions(ctx context.Context, sandboxID string, options *SandboxExecutionStateOptions) (*ResumeSandboxResponse, error) {
	return c.lifecycleCall(ctx, sandboxID, true, options.tri())
}

// SandboxRefreshRequest is the body of RefreshSandbox.
type SandboxRefreshRequest struct {
	// Duration in seconds: > 0 sets expires_at = now + Duration; 0 = now + ttl.
	Duration int32
}

// RefreshSandbox re-arms the soft TTL (POST …/refresh); nil request = now +
// ttl. ErrConflict when the sandbox is paused; ErrInvalidArgument for a
// negative duration (no request sent).
func (c *Client) RefreshSandbox(ctx context.Context, sandboxID string, request *SandboxRefreshRequest) (*Sandbox, error) {
	var d int32
	if request != nil {
		d = request.Duration
	}
	if d < 0 {
		return nil, invalid("refresh duration must be >= 0 seconds, got %d", d)
	}
	return c.sandboxCall(ctx, sandboxID, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info {
		return capi.S0go_sandbox_refresh(k, cc, sandboxID, int(d))
	})
}

// ListSandboxesOptions filters and pages ListSandboxes (nil = the first 50
// of all). Status is a SandboxStatus name; Limit 1..200 (nil = 50).
type ListSandboxesOptions struct {
	Status     string
	TemplateID string
	Paused     *bool
	Limit      *int
	Offset     *int
}

func (o *ListSandboxesOptions) cArgs() (status, paused int, template string, limit, offset int, err error) {
	if o == nil {
		return
	}
	if o.Status != "" {
		s, ok := statusCodes[SandboxStatus(o.Status)]
		if !ok {
			err = invalid("unknown status filter %q", o.Status)
			return
		}
		status = s
	}
	paused = triBool(o.Paused)
	template = o.TemplateID
	if o.Limit != nil {
		if *o.Limit < 1 || *o.Limit > 200 {
			err = invalid("limit must be in 1..200, got %d", *o.Limit)
			return
		}
		limit = *o.Limit
	}
	if o.Offset != nil {
		if *o.Offset < 0 || *o.Offset > 1<<31-1 {
			err = invalid("offset must be >= 0, got %d", *o.Offset)
			return
		}
		offset = *o.Offset
	}
	return
}

// ListSandboxesResponse is one page of sandboxes, newest first.
type ListSandboxesResponse struct {
	Sandboxes []*Sandbox
	Count     int  // matches before paging
	HasMore   bool // offset + limit < Count
}

// ListSandboxes fetches one page (GET /api/v1/sandboxes).
func (c *Client) ListSandboxes(ctx context.Context, opts *ListSandboxesOptions) (*ListSandboxesResponse, error) {
	status, paused, template, limit, offset, err := opts.cArgs()
	if err == nil {
		err = noNUL(template)
	}
	if err != nil {
		return nil, err
	}
	var out *ListSandboxesResponse
	err = c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_sandbox_list(k, cc, status, paused, template, limit, offset)
		if p == nil || p.Swigcptr() == 0 {
			return
		}
		defer capi.S0_sandbox_page_free(p)
		n := capi.S0_sandbox_page_length(p)
		out = &ListSandboxesResponse{Count: int(capi.S0_sandbox_page_count(p)),
			HasMore: capi.S0_sandbox_page_has_more(p), Sandboxes: make([]*Sandbox, 0, n)}
		for i := int64(0); i < n; i++ {
			s := sandboxFromC(capi.S0_sandbox_page_at(p, i))
			s.client = c
			out.Sandboxes = append(out.Sandboxes, s)
		}
	})
	return out, err
}

// SandboxPages iterates over the pages of a listing: ListSandboxes with
// opts, then again with the offset moved past each page while HasMore. An
// error is yielded once, as the last pair. The context applies to every
// page request; breaking out of the loop sends no further request.
//
//	for page, err := range client.SandboxPages(ctx, &sandbox0.ListSandboxesOptions{Limit: &n}) { … }
func (c *Client) SandboxPages(ctx context.Context, opts *ListSandboxesOptions) iter.Seq2[*ListSandboxesResponse, error] {
	return func(yield func(*ListSandboxesResponse, error) bool) {
		o := ListSandboxesOptions{}
		if opts != nil {
			o = *opts
		}
		offset := 0
		if o.Offset != nil {
			offset = *o.Offset
		}
		for {
			o.Offset = &offset
			page, err := c.ListSandboxes(ctx, &o)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(page, nil) || !page.HasMore || len(page.Sandboxes) == 0 {
				return
			}
			offset += len(page.Sandboxes)
		}
	}
}

// AllSandboxes iterates over every sandbox of SandboxPages(ctx, opts), one
// at a time; an error is yielded once, as the last pair.
//
//	for sb, err := range client.AllSandboxes(ctx, nil) { … }
func (c *Client) AllSandboxes(ctx context.Context, opts *ListSandboxesOptions) iter.Seq2[*Sandbox, error] {
	return func(yield func(*Sandbox, error) bool) {
		for page, err := range c.SandboxPages(ctx, opts) {
			if err != nil {
				yield(nil, err)
				return
			}
			for _, sb := range page.Sandboxes {
				if !yield(sb, nil) {
					return
				}
			}
		}
	}
}
