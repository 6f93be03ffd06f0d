package sandbox0_test

import (
	"context"
	"errors"
	"testing"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
	"github.com/libsandbox0/libsandbox0/bindings/go/facade"
)

// A nil or zero Client or Local (not made by NewClient, OpenLocal…) is a
// clear ErrInvalidArgument, not a nil-pointer panic, and so is a nil client
// handed to the facade.
func TestNilAndZeroHandles(t *testing.T) {
	ctx := context.Background()
	invalidErr := func(what string, f func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", what, r)
			}
		}()
		if err := f(); !errors.Is(err, sandbox0.ErrInvalidArgument) {
			t.Errorf("%s: %T %v (want ErrInvalidArgument)", what, err, err)
		}
	}
	var nilClient *sandbox0.Client
	var zeroClient sandbox0.Client
	invalidErr("nil Client", func() error { _, err := nilClient.GetSandbox(ctx, "sb1"); return err })
	invalidErr("zero Client", func() error { _, err := zeroClient.GetSandbox(ctx, "sb1"); return err })
	invalidErr("zero Client wait", func() error { _, err := zeroClient.PauseSandboxAndWait(ctx, "sb1", nil); return err })
	if nilClient.Close() != nil || zeroClient.Close() != nil {
		t.Error("Close of a nil or zero Client is a no-op")
	}
	var nilLocal *sandbox0.Local
	var zeroLocal sandbox0.Local
	invalidErr("nil Local Client", func() error { _, err := nilLocal.Client(); return err })
	invalidErr("zero Local Client", func() error { _, err := zeroLocal.Client(); return err })
	invalidErr("zero Local ArmFault", func() error { return zeroLocal.ArmFault("capture@commit", sandbox0.FaultFail, 1, 0) })
	if nilLocal.Close() != nil || zeroLocal.Close() != nil {
		t.Error("Close of a nil or zero Local is a no-op")
	}
	invalidErr("facade.Create nil client", func() error { _, err := facade.Create(ctx, nil, nil); return err })
	invalidErr("facade.Connect nil client", func() error { _, err := facade.Connect(ctx, nil, "sb1", 0); return err })
	invalidErr("facade.List nil client", func() error { _, err := facade.List(nil, nil, 10); return err })
}
