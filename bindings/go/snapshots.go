package sandbox0

import (
	"context"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// CreateSandboxRootFSSnapshotRequest is the body of CreateSandboxRootFSSnapshot.
type CreateSandboxRootFSSnapshotRequest struct {
	Name        string
	Description string
	ExpiresAt   time.Time // zero = never; otherwise in the future
}

func (c *Client) snapshotCall(ctx context.Context, id, what string,
	f func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_snapshot_info) (*SandboxRootFSSnapshot, error) {
	if id == "" {
		return nil, invalid("%s is required", what)
	}
	if err := noNUL(id); err != nil {
		return nil, err
	}
	var out *SandboxRootFSSnapshot
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := f(k, cc)
		if p != nil && p.Swigcptr() != 0 {
			defer capi.S0_snapshot_info_free(p)
			out = snapshotFromC(p)
		}
	})
	return out, err
}

// CreateSandboxRootFSSnapshot snapshots a running or paused sandbox's
// RootFS (POST …/{id}/snapshots; filesystem state only). Nil request: no
// name, no expiry. ErrConflict when the source is neither running nor
// paused; ErrInvalidArgument for an expiry in the past.
func (c *Client) CreateSandboxRootFSSnapshot(ctx context.Context, sandboxID string, request *CreateSandboxRootFSSnapshotRequest) (*SandboxRootFSSnapshot, error) {
	var r CreateSandboxRootFSSnapshotRequest
	if request != nil {
		r = *request
	}
	if err := noNUL(r.Name, r.Description); err != nil {
		return nil, err
	}
	var exp int64
	if !r.ExpiresAt.IsZero() {
		exp = r.ExpiresAt.UnixMilli()
	}
	return c.snapshotCall(ctx, sandboxID, "sandbox id", func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_snapshot_info {
		return capi.S0go_snapshot_create(k, cc, sandboxID, r.Name, r.Description, exp)
	})
}

// ListSandboxRootFSSnapshots lists a sandbox's snapshots, newest first.
func (c *Client) ListSandboxRootFSSnapshots(ctx context.Context, sandboxID string) (*SandboxRootFSSnapshotList, error) {
	if sandboxID == "" {
		return nil, invalid("sandbox id is required")
	}
	if err := noNUL(sandboxID); err != nil {
		return nil, err
	}
	var out *SandboxRootFSSnapshotList
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_snapshot_list_get(k, cc, sandboxID)
		if p == nil || p.Swigcptr() == 0 {
			return
		}
		defer capi.S0_snapshot_list_free(p)
		n := capi.S0_snapshot_list_length(p)
		out = &SandboxRootFSSnapshotList{Count: int(capi.S0_snapshot_list_count(p)),
			Snapshots: make([]*SandboxRootFSSnapshot, 0, n)}
		for i := int64(0); i < n; i++ {
			out.Snapshots = append(out.Snapshots, snapshotFromC(capi.S0_snapshot_list_at(p, i)))
		}
	})
	return out, err
}

// GetSandboxRootFSSnapshot reads one snapshot; ErrNotFound when unknown or expired.
func (c *Client) GetSandboxRootFSSnapshot(ctx context.Context, snapshotID string) (*SandboxRootFSSnapshot, error) {
	return c.snapshotCall(ctx, snapshotID, "snapshot id", func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_snapshot_info {
		return capi.S0go_snapshot_get(k, cc, snapshotID)
	})
}

// DeleteSandboxRootFSSnapshot deletes one snapshot; sandboxes and forks made
// from it are unaffected. ErrNotFound when unknown.
func (c *Client) DeleteSandboxRootFSSnapshot(ctx context.Context, snapshotID string) error {
	if snapshotID == "" {
		return invalid("snapshot id is required")
	}
	return c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		capi.S0go_snapshot_delete(k, cc, snapshotID)
	})
}

// RestoreSandboxRootFSRequest is the body of RestoreSandboxRootFS.
type RestoreSandboxRootFSRequest struct {
	SnapshotID string
}

// RestoreSandboxRootFS moves a paused sandbox's RootFS head to a snapshot;
// it stays paused. ErrConflict (reason not_paused) when it is not paused.
func (c *Client) RestoreSandboxRootFS(ctx context.Context, sandboxID string, request RestoreSandboxRootFSRequest) (*RestoreSandboxRootFSResponse, error) {
	if sandboxID == "" || request.SnapshotID == "" {
		return nil, invalid("sandbox id and snapshot id are required")
	}
	if err := noNUL(sandboxID, request.SnapshotID); err != nil {
		return nil, err
	}
	var out *LifecycleResult
	err := c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		p := capi.S0go_sandbox_restore(k, cc, sandboxID, request.SnapshotID)
		if p != nil && p.Swigcptr() != 0 {
			out = takeLifecycle(p)
		}
	})
	return out, err
}

// ForkSandboxRequest is the body of ForkSandbox: the child's TTLs (nil =
// not sent) and the memory mode.
type ForkSandboxRequest struct {
	TTL     *int32
	HardTTL *int32
	// Memory forks the execution state too (the child is paused with a
	// retained memory image); it needs ForkSandboxOptions.IdempotencyKey.
	Memory bool
}

// ForkSandboxOptions are the request options of ForkSandboxWithOptions.
type ForkSandboxOptions struct {
	// IdempotencyKey is sent as Idempotency-Key (1..255 characters, not
	// blank); required for a memory fork, whose 503 capture_pending the
	// caller repeats with the same key.
	IdempotencyKey string
}

// ForkSandbox forks a running or paused sandbox into a new paused sandbox
// (POST …/{id}/fork) and returns the child.
func (c *Client) ForkSandbox(ctx context.Context, sandboxID string, request *ForkSandboxRequest) (*Sandbox, error) {
	return c.ForkSandboxWithOptions(ctx, sandboxID, request, nil)
}

// ForkSandboxWithOptions is ForkSandbox with an Idempotency-Key. A memory
// fork without a valid key is ErrInvalidArgument, before any request (CL-13).
func (c *Client) ForkSandboxWithOptions(ctx context.Context, sandboxID string, request *ForkSandboxRequest, options *ForkSandboxOptions) (*Sandbox, error) {
	var r ForkSandboxRequest
	if request != nil {
		r = *request
	}
	var set uint
	var ttl, hard int
	if r.TTL != nil {
		set |= 1
		ttl = int(*r.TTL)
	}
	if r.HardTTL != nil {
		set |= 2
		hard = int(*r.HardTTL)
	}
	mem, hasKey, key := 0, 0, ""
	if r.Memory {
		mem = 1
	}
	if options != nil {
		hasKey, key = 1, options.IdempotencyKey
	}
	if err := noNUL(key); err != nil {
		return nil, err
	}
	return c.sandboxCall(ctx, sandboxID, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) capi.Struct_SS_s0_sandbox_info {
		return capi.S0go_sandbox_fork(k, cc, sandboxID, set, ttl, hard, mem, hasKey, key)
	})
}
