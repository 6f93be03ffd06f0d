package sandbox0_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// 8 goroutines share one client: each claims, writes, reads, pauses and
// resumes its own sandbox, and lists; a cancelled call in one goroutine
// does not disturb the others.
func TestEightGoroutinesShareOneClient(t *testing.T) {
	srv := startServer(t)
	c := srv.client(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			errs <- func() error {
				sb, err := c.ClaimSandbox(ctx, "default")
				if err != nil {
					return err
				}
				body := []byte(fmt.Sprintf("goroutine %d", g))
				for i := 0; i < 5; i++ {
					if err := sb.WriteFile(ctx, "/workspace/g.txt", body); err != nil {
						return err
					}
					if b, err := sb.ReadFile(ctx, "/workspace/g.txt"); err != nil || string(b) != string(body) {
						return fmt.Errorf("read %q %v", b, err)
					}
					cctx, cancel := context.WithCancel(ctx)
					cancel()
					if _, err := c.GetSandbox(cctx, sb.ID); err != context.Canceled {
						return fmt.Errorf("cancelled call: %v", err)
					}
					if _, err := c.ListSandboxes(ctx, nil); err != nil {
						return err
					}
				}
				if _, err := c.PauseSandboxAndWait(ctx, sb.ID, nil); err != nil {
					return err
				}
				if _, err := c.ResumeSandboxAndWait(ctx, sb.ID, nil); err != nil {
					return err
				}
				return c.DeleteSandbox(ctx, sb.ID)
			}()
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// Close while calls are in flight: they return promptly, then the client
// refuses new calls.
func TestCloseWithCallsInFlight(t *testing.T) {
	_, c := openLocal(t, &sandbox0.LocalOptions{})
	sb := claim(t, c)
	var wg sync.WaitGroup
	started := make(chan struct{}, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			_, err := c.WaitForSandboxLifecycle(context.Background(), sb.ID, func(*sandbox0.Sandbox) bool {
				if first {
					first = false
					started <- struct{}{}
				}
				return false
			}, nil)
			if !errors.Is(err, sandbox0.ErrCanceled) && !errors.Is(err, sandbox0.ErrInvalidArgument) {
				t.Errorf("in-flight call after Close: %v", err)
			}
		}()
	}
	for i := 0; i < 4; i++ {
		<-started
	}
	c.Close()
	wg.Wait()
	if _, err := c.GetSandbox(context.Background(), sb.ID); !isClosed(err) {
		t.Fatalf("call after Close: %v (want the closed error)", err)
	}
}

// No C object leaks after 10,000 calls (successes, API errors, local
// errors, cancelled calls), counted by the library's live-object counter.
func TestNoLeakedCObjects(t *testing.T) {
	base := sandbox0.LiveObjects()
	lb, err := sandbox0.OpenLocal(filepath.Join(t.TempDir(), "data"), &sandbox0.LocalOptions{ManualClock: true})
	must(t, err, "OpenLocal")
	c, err := lb.Client()
	must(t, err, "Client")
	ctx := context.Background()
	sb := claim(t, c)
	must(t, sb.WriteFile(ctx, "/workspace/f", []byte("x")), "write")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	mid := sandbox0.LiveObjects()
	for i := 0; i < 10000; i++ {
		var err error
		switch i % 8 {
		case 0:
			_, err = c.GetSandbox(ctx, sb.ID)
		case 1:
			_, err = c.GetSandbox(ctx, "sb_missing") // *APIError
		case 2:
			_, err = sb.ReadFile(ctx, "/workspace/f")
		case 3:
			_, err = c.ListSandboxes(ctx, nil)
		case 4:
			_, err = c.StatFile(ctx, sb.ID, "/workspace/none")
		case 5:
			_, err = c.GetSandbox(cancelled, sb.ID) // refused in Go
		case 6:
			_, err = c.WaitForSandboxLifecycle(ctx, sb.ID, func(s *sandbox0.Sandbox) bool { return true }, nil)
		case 7:
			_, err = c.ListSandboxRootFSSnapshots(ctx, sb.ID)
		}
		if i%8 != 1 && i%8 != 4 && i%8 != 5 && err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := sandbox0.LiveObjects(); got != mid {
		t.Fatalf("live C objects %d after 10,000 calls, %d before", got, mid)
	}
	c.Close()
	lb.Close()
	if got := sandbox0.LiveObjects(); got != base {
		t.Fatalf("live C objects %d after Close, %d before Open", got, base)
	}
}

// The finalizer is a safety net: a client dropped without Close has its C
// objects freed by the garbage collector.
func TestFinalizerFreesDroppedClient(t *testing.T) {
	lb, _ := openLocal(t, nil)
	before := sandbox0.LiveObjects()
	func() {
		c, err := lb.Client()
		must(t, err, "Client")
		_, _ = c.GetSandbox(context.Background(), "sb_missing")
	}()
	for i := 0; i < 200 && sandbox0.LiveObjects() != before; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // the finalizer goroutine runs after the GC cycle
	}
	if got := sandbox0.LiveObjects(); got != before {
		t.Fatalf("live C objects %d, %d before the dropped client", got, before)
	}
}

// A Local and its client both dropped unclosed are freed by their
// finalizers (no reference cycle through a finalized handle).
func TestFinalizerFreesDroppedLocal(t *testing.T) {
	before := sandbox0.LiveObjects()
	dir := filepath.Join(t.TempDir(), "data")
	func() {
		lb, err := sandbox0.OpenLocal(dir, nil)
		must(t, err, "OpenLocal")
		c, err := lb.Client()
		must(t, err, "Client")
		_, _ = c.GetSandbox(context.Background(), "sb_missing")
	}()
	for i := 0; i < 400 && sandbox0.LiveObjects() != before; i++ {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // finalizers run after the GC cycle, in order
	}
	if got := sandbox0.LiveObjects(); got != before {
		t.Fatalf("live C objects %d, %d before the dropped backend", got, before)
	}
	lb, err := sandbox0.OpenLocal(dir, nil) // the directory lock was released
	must(t, err, "reopen")
	lb.Close()
}
