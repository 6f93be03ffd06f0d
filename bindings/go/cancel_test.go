package sandbox0_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// CL-07: cancelling the context of a long wait on the embedded backend
// (real clock) returns context.Canceled within 100 ms.
func TestCL07CancelWithin100ms(t *testing.T) {
	_, c := openLocal(t, &sandbox0.LocalOptions{})
	sb := claim(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time
	polls := 0
	_, err := c.WaitForSandboxLifecycle(ctx, sb.ID, func(*sandbox0.Sandbox) bool {
		if polls++; polls == 3 { // mid-wait: two backoff sleeps done
			cancelled = time.Now()
			cancel()
		}
		return false
	}, &sandbox0.SandboxLifecycleWaitOptions{Timeout: 10 * time.Minute})
	d := time.Since(cancelled)
	if err != context.Canceled {
		t.Fatalf("want bare context.Canceled, got %T %v", err, err)
	}
	if d > 100*time.Millisecond {
		t.Fatalf("returned %s after cancel", d)
	}
}

// Cancelling a single request in flight aborts it promptly.
func TestCancelRequestInFlight(t *testing.T) {
	f := newFake(t, func(r *http.Request, _ []byte, nth int) reply {
		if nth == 0 {
			<-r.Context().Done() // never answers; ends when the client goes away
		}
		return ok(200, sbJSON("sb1", "running", false, 1))
	})
	c := clientOf(t, f.URL)
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var cancelled time.Time
	timer := time.AfterFunc(100*time.Millisecond, func() {
		mu.Lock()
		cancelled = time.Now()
		mu.Unlock()
		cancel()
	})
	defer timer.Stop()
	_, err := c.GetSandbox(ctx, "sb1")
	returned := time.Now()
	if err != context.Canceled {
		t.Fatalf("want context.Canceled, got %T %v", err, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if d := returned.Sub(cancelled); d > 100*time.Millisecond {
		t.Fatalf("returned %s after cancel", d)
	}
	// The same client still works afterwards: its one lane is reused, and
	// the lane's token was reset.
	if sb, err := c.GetSandbox(context.Background(), "sb1"); err != nil || sb.ID != "sb1" {
		t.Fatalf("the client after a cancelled call: %v", err)
	}
}

// A context deadline earlier than Timeout shortens the wait: it ends with
// *SandboxWaitTimeoutError that also matches context.DeadlineExceeded.
func TestContextDeadlineShortensWait(t *testing.T) {
	f := newFake(t, func(r *http.Request, _ []byte, _ int) reply {
		if r.Method == "POST" {
			return ok(200, map[string]any{"sandbox_id": "sb1", "status": "running", "paused": false})
		}
		return ok(200, sbJSON("sb1", "running", false, 1))
	})
	c := clientOf(t, f.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.PauseSandboxAndWait(ctx, "sb1", &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
	var te *sandbox0.SandboxWaitTimeoutError
	if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, sandbox0.ErrTimeout) {
		t.Fatalf("want a wait timeout matching DeadlineExceeded, got %T %v", err, err)
	}
	if te.Timeout > 300*time.Millisecond || !te.ContextDeadline || te.SandboxID != "sb1" {
		t.Fatalf("timeout error %+v", te)
	}
	if d := time.Since(start); d > 700*time.Millisecond {
		t.Fatalf("returned after %s", d)
	}
}

// A context already done sends nothing.
func TestDoneContextSendsNothing(t *testing.T) {
	f := newFake(t, func(*http.Request, []byte, int) reply { return ok(200, nil) })
	c := clientOf(t, f.URL)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.PauseSandboxAndWait(ctx, "sb1", nil); err != context.Canceled {
		t.Fatalf("got %v", err)
	}
	if _, err := c.GetSandbox(ctx, "sb1"); err != context.Canceled {
		t.Fatalf("got %v", err)
	}
	if n := len(f.list("")); n != 0 {
		t.Fatalf("%d requests", n)
	}
}

// No goroutine of a call outlives it, cancelled or not.
func TestNoGoroutineOutlivesCalls(t *testing.T) {
	_, c := openLocal(t, nil)
	sb := claim(t, c)
	call := func(i int) {
		ctx, cancel := context.WithCancel(context.Background())
		if i%2 == 0 {
			cancel()
		}
		_, _ = c.GetSandbox(ctx, sb.ID)
		cancel()
	}
	call(1)
	before := runtime.NumGoroutine()
	for i := 0; i < 200; i++ {
		call(i)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before, %d after", before, after)
	}
}
