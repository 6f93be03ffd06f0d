package sandbox0_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// CL-16: every error type is reached through errors.As, with its fields
// and errors.Is against the sentinels.
func TestCL16ErrorTypes(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()

	// *APIError: 404 from the backend.
	_, err := c.GetSandbox(ctx, "sb_does_not_exist")
	api := asAPI(t, err)
	if api.StatusCode != 404 || api.Code != "not_found" || api.Reason != "not_found" || api.Message == "" || api.RequestID == "" || api.RetryAfterMs != -1 {
		t.Fatalf("APIError %+v", api)
	}
	if !errors.Is(err, sandbox0.ErrNotFound) || errors.Is(err, sandbox0.ErrConflict) {
		t.Fatal("errors.Is against the sentinels")
	}
	if want := "sandbox0 API error (404): not_found - " + api.Message; err.Error() != want {
		t.Fatalf("text %q", err.Error())
	}

	// *SandboxWaitTimeoutError (matches ErrTimeout).
	sb := claim(t, c)
	must(t, lb.ArmFault("node_channel", sandbox0.FaultFail, 0, 0), "arm")
	_, err = c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: 5 * time.Second})
	var te *sandbox0.SandboxWaitTimeoutError
	if !errors.As(err, &te) || te.SandboxID != sb.ID || te.Timeout != 5*time.Second || te.LastSandbox == nil || te.LastSandbox.ID != sb.ID {
		t.Fatalf("wait timeout %T %+v", err, err)
	}
	if !errors.Is(err, sandbox0.ErrTimeout) || err.Error() != "timed out waiting for sandbox "+sb.ID+" after 5s" {
		t.Fatalf("timeout error %q", err.Error())
	}
	must(t, lb.ReleaseFault("node_channel"), "release")

	// *SandboxLifecycleFailedError.
	sb2 := claim(t, c)
	must(t, lb.ArmFault("capture@after-authorize", sandbox0.FaultFail, 1, 0), "arm")
	_, err = c.PauseSandboxAndWait(ctx, sb2.ID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true})
	var lf *sandbox0.SandboxLifecycleFailedError
	if !errors.As(err, &lf) || lf.SandboxID != sb2.ID || lf.Action != "memory pause" || lf.LastSandbox == nil {
		t.Fatalf("lifecycle failed %T %+v", err, err)
	}
	if err.Error() != "sandbox "+sb2.ID+" memory pause reached failed status" || !errors.Is(err, sandbox0.ErrLifecycleFailed) {
		t.Fatalf("text %q", err.Error())
	}

	// *Error: refused before any request; and a local error of the backend.
	_, err = c.ClaimSandbox(ctx, "")
	var le *sandbox0.Error
	if !errors.As(err, &le) || le.Kind != sandbox0.ErrInvalidArgument || !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("local error %T %+v", err, err)
	}
	_, err = sandbox0.OpenLocal(lb.Dir(), nil)
	if !errors.As(err, &le) || le.Reason != "data_dir_locked" || !errors.Is(err, sandbox0.ErrConflict) {
		t.Fatalf("second opener: %T %+v", err, err)
	}

	// Transport: nothing listens there.
	dead, err := sandbox0.NewClient(sandbox0.WithBaseURL("http://127.0.0.1:1"))
	must(t, err, "NewClient")
	defer dead.Close()
	_, err = dead.GetSandbox(ctx, "sb1")
	if !errors.As(err, &le) || !errors.Is(err, sandbox0.ErrTransport) {
		t.Fatalf("transport: %T %+v", err, err)
	}
	// Bad options are refused at construction.
	if _, err := sandbox0.NewClient(sandbox0.WithBaseURL("ftp://x")); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("bad URL: %v", err)
	}
	if _, err := sandbox0.NewClient(sandbox0.WithBaseURL("")); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("empty URL: %v", err)
	}
	if _, err := sandbox0.NewClient(sandbox0.WithTimeout(0)); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("zero timeout: %v", err)
	}
	if _, err := sandbox0.OpenLocal(filepath.Join("/proc", "no-such", "dir"), nil); !errors.As(err, &le) {
		t.Fatalf("unusable dir: %T %v", err, err)
	}
}

// A closed client refuses calls with a clear error.
func TestClosedClient(t *testing.T) {
	_, c := openLocal(t, nil)
	c.Close()
	c.Close()
	_, err := c.GetSandbox(context.Background(), "sb1")
	var le *sandbox0.Error
	if !errors.As(err, &le) || le.Reason != "closed" {
		t.Fatalf("closed client: %v", err)
	}
}
