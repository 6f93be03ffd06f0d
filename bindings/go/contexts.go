package sandbox0

import (
	"context"
	"encoding/json"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// Process APIs (docs/wire.md §8): contexts (a stateful "repl" or a one-shot
// "cmd") and, through RuntimeCall, supervised sessions. These are runtime
// requests: a paused sandbox with auto-resume is woken first. procd's
// errors arrive as *APIError: ErrNotFound context_not_found, ErrConflict
// process_not_running, ErrGone process_finished, ErrTimeout exec_timeout.

// ContextCommand is the argv of a "cmd" context.
type ContextCommand struct {
	Command []string `json:"command"`
}

// CreateContextRequest is the body of CreateContext.
type CreateContextRequest struct {
	Type          string            `json:"type"` // "repl" (default when empty) or "cmd"
	Cmd           *ContextCommand   `json:"cmd,omitempty"`
	CWD           string            `json:"cwd,omitempty"`
	EnvVars       map[string]string `json:"env_vars,omitempty"`
	WaitUntilDone bool              `json:"wait_until_done,omitempty"` // cmd: answer once exited
	// Extra holds any other CreateContextRequest member (repl, pty_size,
	// idle_timeout_sec, ttl_sec), marshalled as is.
	Extra map[string]any `json:"-"`
}

func (r CreateContextRequest) body() (string, error) {
	if r.Type == "" {
		r.Type = "repl"
		if r.Cmd != nil {
			r.Type = "cmd"
		}
	}
	b, err := json.Marshal(r)
	if err != nil || len(r.Extra) == 0 {
		return string(b), err
	}
	m := map[string]any{}
	for k, v := range r.Extra {
		m[k] = v
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return "", err
	}
	b, err = json.Marshal(m)
	return string(b), err
}

// ContextResponse is a context as the API describes it.
type ContextResponse struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Running bool            `json:"running"`
	Raw     json.RawMessage `json:"-"` // the whole ContextResponse
}

// ContextExecResponse is the result of ContextExec.
type ContextExecResponse struct {
	OutputRaw string          `json:"output_raw"`
	Stdout    string          `json:"stdout"`
	Stderr    string          `json:"stderr"`
	ExitCode  *int            `json:"exit_code"` // set once the process has exited
	State     string          `json:"state"`
	Raw       json.RawMessage `json:"-"` // the whole ContextExecResponse
}

func decodeInto(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return &Error{Kind: ErrProtocol, Reason: "unexpected_response", Message: err.Error()}
	}
	return nil
}

func (c *Client) jsonCall(ctx context.Context, f func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int) ([]byte, error) {
	var raw []byte
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		if f(k, cc) == 0 {
			raw = capi.S0go_call_data(k)
		}
	})
	return raw, err
}

func contextResponse(raw []byte, err error) (*ContextResponse, error) {
	if err != nil {
		return nil, err
	}
	out := &ContextResponse{Raw: raw}
	if err := decodeInto(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

// CreateContext starts a context (POST …/contexts).
func (c *Client) CreateContext(ctx context.Context, sandboxID string, request CreateContextRequest) (*ContextResponse, error) {
	if sandboxID == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID); err != nil {
		return nil, err
	}
	body, err := request.body()
	if err != nil {
		return nil, invalid("context request: %v", err)
	}
	return contextResponse(c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_context_create(k, cc, sandboxID, body)
	}))
}

// GetContext reads a context.
func (c *Client) GetContext(ctx context.Context, sandboxID, contextID string) (*ContextResponse, error) {
	if sandboxID == "" || contextID == "" {
		return nil, invalid("sandbox id and context id are required")
	}
	if err := noNUL(sandboxID, contextID); err != nil {
		return nil, err
	}
	return contextResponse(c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_context_get(k, cc, sandboxID, contextID)
	}))
}

// DeleteContext deletes a context and kills its process.
func (c *Client) DeleteContext(ctx context.Context, sandboxID, contextID string) error {
	if sandboxID == "" || contextID == "" {
		return invalid("sandbox id and context id are required")
	}
	if err := noNUL(sandboxID, contextID); err != nil {
		return err
	}
	_, err := c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_context_delete(k, cc, sandboxID, contextID)
	})
	return err
}

// ContextExec runs input in a context and waits for its result (a REPL
// gets a newline appended when input lacks one).
func (c *Client) ContextExec(ctx context.Context, sandboxID, contextID, input string) (*ContextExecResponse, error) {
	if sandboxID == "" || contextID == "" {
		return nil, invalid("sandbox id and context id are required")
	}
	if err := noNUL(sandboxID, contextID, input); err != nil {
		return nil, err
	}
	raw, err := c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_context_exec(k, cc, sandboxID, contextID, input)
	})
	if err != nil {
		return nil, err
	}
	out := &ContextExecResponse{Raw: raw}
	if err := decodeInto(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

// RuntimeCallResult is the answer of RuntimeCall.
type RuntimeCallResult struct {
	StatusCode int             // the 2xx status (201 created, 200 replayed, 202 accepted…)
	Data       json.RawMessage // the envelope's data member ("null" when absent)
}

// RuntimeCall reaches any endpoint of the process family:
// <method> /api/v1/sandboxes/{id}<suffix>, suffix starting with
// "/contexts" or "/sessions" (already escaped, optional "?query"). body is
// marshalled to JSON (nil = no body); idempotencyKey is sent as
// Idempotency-Key when not empty.
func (c *Client) RuntimeCall(ctx context.Context, method, sandboxID, suffix string, body any, idempotencyKey string) (*RuntimeCallResult, error) {
	if sandboxID == "" || method == "" || suffix == "" {
		return nil, invalid("method, sandbox id and suffix are required")
	}
	if err := noNUL(method, sandboxID, suffix, idempotencyKey); err != nil {
		return nil, err
	}
	var bodyJSON string
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, invalid("runtime call body: %v", err)
		}
		bodyJSON = string(b)
	}
	out := &RuntimeCallResult{}
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		if capi.S0go_runtime_call(k, cc, method, sandboxID, suffix, bodyJSON, idempotencyKey) == 0 {
			out.StatusCode = capi.S0go_call_status(k)
			out.Data = capi.S0go_call_data(k)
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CreateContext is Client.CreateContext on this sandbox.
func (s *Sandbox) CreateContext(ctx context.Context, request CreateContextRequest) (*ContextResponse, error) {
	return s.cl().CreateContext(ctx, s.ID, request)
}

// GetContext is Client.GetContext on this sandbox.
func (s *Sandbox) GetContext(ctx context.Context, contextID string) (*ContextResponse, error) {
	return s.cl().GetContext(ctx, s.ID, contextID)
}

// DeleteContext is Client.DeleteContext on this sandbox.
func (s *Sandbox) DeleteContext(ctx context.Context, contextID string) error {
	return s.cl().DeleteContext(ctx, s.ID, contextID)
}

// ContextExec is Client.ContextExec on this sandbox.
func (s *Sandbox) ContextExec(ctx context.Context, contextID, input string) (*ContextExecResponse, error) {
	return s.cl().ContextExec(ctx, s.ID, contextID, input)
}
