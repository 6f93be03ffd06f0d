package sandbox0_test

import (
	"context"
	"errors"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// isClosed reports the error of a call refused (or ended) by Close.
func isClosed(err error) bool {
	var le *sandbox0.Error
	return errors.As(err, &le) && le.Reason == "closed"
}

// within runs f on a goroutine and fails the test if it has not returned
// within d (a deadlock).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still blocked after %s (deadlock)", what, d)
	}
}

// Close called from inside a wait's predicate (the predicate runs on the
// calling goroutine, inside the call) must not deadlock: the wait ends with
// the closed error and the C objects are freed when it has returned.
func TestCloseInsidePredicate(t *testing.T) {
	lb, c := openLocal(t, nil)
	sb := claim(t, c)
	c2, err := lb.Client()
	must(t, err, "Client")
	base := sandbox0.LiveObjects()
	within(t, 10*time.Second, "Client.Close inside a predicate", func() {
		_, err = c2.WaitForSandboxLifecycle(context.Background(), sb.ID, func(*sandbox0.Sandbox) bool {
			c2.Close()
			return false
		}, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
	})
	if !isClosed(err) || errors.Is(err, context.Canceled) {
		t.Fatalf("wait whose client closed: %T %v (want the closed error, not context.Canceled)", err, err)
	}
	if got := sandbox0.LiveObjects(); got >= base {
		t.Fatalf("live C objects %d after Close inside the predicate returned, %d before", got, base)
	}
	if _, err := c2.GetSandbox(context.Background(), sb.ID); !isClosed(err) {
		t.Fatalf("call after Close: %v", err)
	}
}

// Local.Close from inside a predicate of one of its clients: no deadlock,
// and the backend is closed (its directory reopenable) once the call returned.
func TestLocalCloseInsidePredicate(t *testing.T) {
	lb, c := openLocal(t, nil)
	sb := claim(t, c)
	within(t, 10*time.Second, "Local.Close inside a predicate", func() {
		_, err := c.WaitForSandboxLifecycle(context.Background(), sb.ID, func(*sandbox0.Sandbox) bool {
			lb.Close()
			return false
		}, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
		if !isClosed(err) {
			t.Errorf("wait whose backend closed: %T %v", err, err)
		}
	})
	again, err := sandbox0.OpenLocal(lb.Dir(), nil)
	must(t, err, "reopen after Close inside a predicate")
	again.Close()
}

// A predicate that makes another call on its client while another
// goroutine's Close is pending gets the closed error instead of blocking
// forever (a nested read lock behind a waiting writer).
func TestNestedCallWhileClosePending(t *testing.T) {
	lb, c := openLocal(t, nil)
	sb := claim(t, c)
	c2, err := lb.Client()
	must(t, err, "Client")
	closeDone := make(chan struct{})
	var nestedErr error
	within(t, 10*time.Second, "nested call while Close is pending", func() {
		first := true
		_, err = c2.WaitForSandboxLifecycle(context.Background(), sb.ID, func(*sandbox0.Sandbox) bool {
			if !first {
				return false
			}
			first = false
			go func() { c2.Close(); close(closeDone) }()
			// Calls keep working until Close has begun; then they are refused.
			for {
				if _, nestedErr = c2.GetSandbox(context.Background(), sb.ID); nestedErr != nil {
					return false
				}
			}
		}, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
	})
	if !isClosed(nestedErr) {
		t.Fatalf("nested call after Close began: %v", nestedErr)
	}
	if !isClosed(err) {
		t.Fatalf("the wait itself: %v", err)
	}
	<-closeDone
}

// A call ended by Close (not by its context) does not claim its context
// was cancelled: it returns the closed error.
func TestCallEndedByCloseIsNotContextCanceled(t *testing.T) {
	lb, c := openLocal(t, &sandbox0.LocalOptions{})
	sb := claim(t, c)
	c2, err := lb.Client()
	must(t, err, "Client")
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		_, err := c2.WaitForSandboxLifecycle(context.Background(), sb.ID, func(*sandbox0.Sandbox) bool {
			if first {
				first = false
				close(started)
			}
			return false
		}, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
		done <- err
	}()
	<-started
	c2.Close()
	err = <-done
	if errors.Is(err, context.Canceled) || !isClosed(err) {
		t.Fatalf("call ended by Close: %T %v (want the closed error)", err, err)
	}
}
