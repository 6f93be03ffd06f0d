package sandbox0_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// A wait whose context deadline has already passed ends like one whose
// deadline passes mid-wait: a *SandboxWaitTimeoutError matching
// context.DeadlineExceeded (not a bare context error only some callers'
// errors.As checks would miss), and nothing is sent.
func TestWaitWithPastDeadline(t *testing.T) {
	_, c := openLocal(t, nil)
	sb := claim(t, c)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for name, call := range map[string]func() error{
		"PauseSandboxAndWait": func() error {
			_, err := c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
			return err
		},
		"WaitForSandboxLifecycle": func() error {
			_, err := c.WaitForSandboxLifecycle(ctx, sb.ID, func(*sandbox0.Sandbox) bool { return true }, nil)
			return err
		},
	} {
		err := call()
		var te *sandbox0.SandboxWaitTimeoutError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !te.ContextDeadline || te.SandboxID != sb.ID {
			t.Errorf("%s with a past deadline: %T %v", name, err, err)
		}
	}
	if got, err := c.GetSandbox(context.Background(), sb.ID); err != nil || got.Paused {
		t.Fatalf("the sandbox after waits refused up front: %+v %v", got, err)
	}
	// A single call keeps returning the bare context error.
	if _, err := c.GetSandbox(ctx, sb.ID); err != context.DeadlineExceeded {
		t.Fatalf("GetSandbox with a past deadline: %T %v", err, err)
	}
}

// A wait ended by its context's deadline reports the last sandbox it saw
// whichever fires first, the C wait's own deadline or the context's cancel
// (the latter used to leave LastSandbox nil about one time in five).
func TestContextDeadlineTimeoutKeepsLastSandbox(t *testing.T) {
	f := newFake(t, func(*http.Request, []byte, int) reply { return ok(200, sbJSON("sb1", "running", false, 1)) })
	c := clientOf(t, f.URL)
	for i := 0; i < 30; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Millisecond)
		_, err := c.WaitForSandboxLifecycle(ctx, "sb1", func(*sandbox0.Sandbox) bool { return false },
			&sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute, PollInterval: 10 * time.Millisecond})
		cancel()
		var te *sandbox0.SandboxWaitTimeoutError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run %d: %T %v", i, err, err)
		}
		if te.LastSandbox == nil || te.LastSandbox.ID != "sb1" {
			t.Fatalf("run %d: LastSandbox %+v after several polls", i, te.LastSandbox)
		}
	}
}
