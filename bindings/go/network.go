package sandbox0

import (
	"context"
	"encoding/json"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// NetworkPolicy is a SandboxNetworkPolicy: Mode "allow-all" or
// "block-all", and the egress rules as the API spells them (camelCase
// inside, e.g. {"allowedDomains": [...]}).
type NetworkPolicy struct {
	Mode   string         `json:"mode"`
	Egress map[string]any `json:"egress,omitempty"`
	// Raw is the whole policy as the API returned it (unset on input).
	Raw json.RawMessage `json:"-"`
}

func networkPolicy(raw []byte, err error) (*NetworkPolicy, error) {
	if err != nil {
		return nil, err
	}
	p := &NetworkPolicy{Raw: raw}
	if err := decodeInto(raw, p); err != nil {
		return nil, err
	}
	return p, nil
}

// GetSandboxNetworkPolicy reads the sandbox's network policy ({"mode":
// "allow-all"} when none was set).
func (c *Client) GetSandboxNetworkPolicy(ctx context.Context, sandboxID string) (*NetworkPolicy, error) {
	if sandboxID == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID); err != nil {
		return nil, err
	}
	return networkPolicy(c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_sandbox_get_network_policy(k, cc, sandboxID)
	}))
}

// UpdateSandboxNetworkPolicy replaces the network policy (policy is any
// JSON-marshalable value, e.g. NetworkPolicy or json.RawMessage). A running
// sandbox applies it at once, a paused one when it resumes. A bad policy is
// ErrInvalidArgument (400 bad_request) and the old one stays.
func (c *Client) UpdateSandboxNetworkPolicy(ctx context.Context, sandboxID string, policy any) (*NetworkPolicy, error) {
	if sandboxID == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID); err != nil {
		return nil, err
	}
	b, err := json.Marshal(policy)
	if err != nil {
		return nil, invalid("network policy: %v", err)
	}
	return networkPolicy(c.jsonCall(ctx, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) int {
		return capi.S0go_sandbox_update_network_policy(k, cc, sandboxID, string(b))
	}))
}
