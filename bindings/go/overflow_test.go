package sandbox0_test

import (
	"context"
	"math"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Huge durations do not overflow into negative milliseconds: a wait with
// Timeout math.MaxInt64 runs (it used to be refused with "timeout_ms must be
// >= 0"), WithTimeout(math.MaxInt64) makes a client, and AdvanceClock moves
// the clock forward (it silently did nothing).
func TestHugeDurations(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	huge := time.Duration(math.MaxInt64)
	got, err := c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: huge, PollInterval: huge})
	if err != nil || !got.Paused {
		t.Fatalf("wait with Timeout MaxInt64: %v", err)
	}
	hc, err := sandbox0.NewClient(sandbox0.WithBaseURL("http://127.0.0.1:1"), sandbox0.WithTimeout(huge))
	must(t, err, "NewClient(WithTimeout(MaxInt64))")
	hc.Close()
	before := lb.Now()
	must(t, lb.AdvanceClock(huge), "AdvanceClock(MaxInt64)")
	if after := lb.Now(); !after.After(before.Add(100 * 365 * 24 * time.Hour)) {
		t.Fatalf("clock %s after advancing %s from %s", after, huge, before)
	}
}
