package sandbox0_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Strings with a NUL byte are refused with ErrInvalidArgument before any
// request: C would cut them at the NUL, so "sb_x\x00junk" reached sandbox
// "sb_x", and a file path "/workspace/a\x00/../../etc/passwd" wrote
// /workspace/a.
func TestNULBytesRefused(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	isInvalid := func(what string, err error) {
		t.Helper()
		var le *sandbox0.Error
		if !errors.As(err, &le) || !errors.Is(err, sandbox0.ErrInvalidArgument) || le.Reason != "invalid_argument" {
			t.Errorf("%s: %T %v (want ErrInvalidArgument)", what, err, err)
		}
	}
	_, err := c.GetSandbox(ctx, sb.ID+"\x00junk")
	isInvalid("GetSandbox", err)
	_, err = c.ClaimSandbox(ctx, "default\x00x")
	isInvalid("ClaimSandbox", err)
	err = sb.WriteFile(ctx, "/workspace/a\x00/../../etc/passwd", []byte("x"))
	isInvalid("WriteFile", err)
	if _, err := sb.StatFile(ctx, "/workspace/a"); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Errorf("the truncated path was written: %v", err)
	}
	_, err = sb.ReadFile(ctx, "/workspace/a\x00b")
	isInvalid("ReadFile", err)
	err = sb.MoveFile(ctx, "/workspace/x", "/workspace/y\x00")
	isInvalid("MoveFile", err)
	err = c.DeleteSandbox(ctx, sb.ID+"\x00")
	isInvalid("DeleteSandbox", err)
	_, err = c.PauseSandbox(ctx, sb.ID+"\x00")
	isInvalid("PauseSandbox", err)
	_, err = c.PauseSandboxAndWait(ctx, sb.ID+"\x00", nil)
	isInvalid("PauseSandboxAndWait", err)
	_, err = c.GetSandboxRootFSSnapshot(ctx, "snap\x00")
	isInvalid("GetSandboxRootFSSnapshot", err)
	_, err = c.CreateSandboxRootFSSnapshot(ctx, sb.ID, &sandbox0.CreateSandboxRootFSSnapshotRequest{Name: "a\x00b"})
	isInvalid("CreateSandboxRootFSSnapshot name", err)
	_, err = c.ContextExec(ctx, sb.ID, "ctx_1", "echo a\x00b")
	isInvalid("ContextExec input", err)
	_, err = c.GetSandboxNetworkPolicy(ctx, sb.ID+"\x00")
	isInvalid("GetSandboxNetworkPolicy", err)
	_, err = sandbox0.NewClient(sandbox0.WithBaseURL("http://h\x00ost"))
	isInvalid("NewClient base URL", err)
	_, err = sandbox0.NewClient(sandbox0.WithToken("s0_secret\x00x"))
	isInvalid("NewClient token", err)
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("the error echoes the token: %v", err)
	}
	_, err = sandbox0.OpenLocal(lb.Dir()+"\x00other", nil)
	isInvalid("OpenLocal dir", err)
	isInvalid("ArmFault", lb.ArmFault("capture@commit\x00", sandbox0.FaultFail, 1, 0))
	isInvalid("BuildTemplate", lb.BuildTemplate("t\x00", "", nil))
	_, err = lb.Inspect(sb.ID + "\x00")
	isInvalid("Inspect", err)
}
