package sandbox0_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Negative durations given to the embedded backend's controls are
// ErrInvalidArgument naming the argument: Quiesce(-1s) used to report
// "background work still running" (ErrTimeout), and a negative fault
// delay "invalid fault mode or count".
func TestLocalNegativeDurations(t *testing.T) {
	lb, _ := openLocal(t, nil)
	for what, err := range map[string]error{
		"timeout": lb.Quiesce(-time.Second),
		"delay":   lb.ArmFault("capture@commit", sandbox0.FaultDelay, 1, -time.Second),
	} {
		var le *sandbox0.Error
		if !errors.As(err, &le) || !errors.Is(err, sandbox0.ErrInvalidArgument) || !strings.Contains(le.Message, what) {
			t.Errorf("negative %s: %T %v", what, err, err)
		}
	}
	if facts, err := lb.Inspect(""); err != nil || strings.Contains(toJSON(t, facts["faults"]), "capture@commit") {
		t.Fatalf("a refused fault was armed: %v %v", facts["faults"], err)
	}
}
