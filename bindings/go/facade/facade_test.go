package facade_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
	"github.com/libsandbox0/libsandbox0/bindings/go/facade"
)

func open(t *testing.T, opts *sandbox0.LocalOptions) (*sandbox0.Local, *sandbox0.Client) {
	t.Helper()
	if opts == nil {
		opts = &sandbox0.LocalOptions{ManualClock: true}
	}
	lb, err := sandbox0.OpenLocal(filepath.Join(t.TempDir(), "data"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	c, err := lb.Client()
	if err != nil {
		t.Fatal(err)
	}
	return lb, c
}

func must(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// UC: create (kill on timeout by default), memory pause keeps processes,
// connect resumes and re-arms the deadline, kill.
func TestFacadeKillOnTimeout(t *testing.T) {
	lb, c := open(t, nil)
	ctx := context.Background()
	sbx, err := facade.Create(ctx, c, &facade.CreateOptions{Timeout: 10 * time.Minute, Envs: map[string]string{"E": "v"}})
	must(t, err, "Create")
	sb, err := c.GetSandbox(ctx, sbx.ID())
	must(t, err, "GetSandbox")
	if sb.HardExpiresAt.IsZero() || !sb.ExpiresAt.IsZero() || sb.AutoResume {
		t.Fatalf("kill-mode claim %+v", sb)
	}
	if d := sb.HardExpiresAt.Sub(lb.Now()); d < 599*time.Second || d > 601*time.Second {
		t.Fatalf("hard deadline in %s", d)
	}
	rc, err := c.CreateContext(ctx, sbx.ID(), sandbox0.CreateContextRequest{})
	must(t, err, "CreateContext")
	_, err = c.ContextExec(ctx, sbx.ID(), rc.ID, "V=remembered")
	must(t, err, "exec")
	must(t, sbx.Pause(ctx), "Pause")
	if st, _ := sbx.State(ctx); st != facade.StatePaused {
		t.Fatalf("state %s", st)
	}
	sb, _ = c.GetSandbox(ctx, sbx.ID())
	if !sb.HardExpiresAt.IsZero() {
		t.Fatal("a paused kill-mode sandbox kept its hard deadline")
	}
	same, err := facade.Connect(ctx, c, sbx.ID(), time.Minute)
	must(t, err, "Connect")
	out, err := c.ContextExec(ctx, same.ID(), rc.ID, "echo $V")
	must(t, err, "exec after connect")
	if out.Stdout != "remembered\n" {
		t.Fatalf("memory after connect: %q", out.Stdout)
	}
	sb, _ = c.GetSandbox(ctx, sbx.ID())
	if d := sb.HardExpiresAt.Sub(lb.Now()); d < 59*time.Second || d > 61*time.Second {
		t.Fatalf("connect re-armed the hard deadline in %s", d)
	}
	if ok, _ := same.IsRunning(ctx); !ok {
		t.Fatal("not running after connect")
	}
	must(t, facade.Kill(ctx, c, sbx.ID()), "Kill")
	if st, err := sbx.State(ctx); err != nil || st != facade.StateKilled {
		t.Fatalf("after kill: %s %v", st, err)
	}
	if err := sbx.Kill(ctx); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("second kill: %v", err)
	}
}

// UC: on_timeout pause: the timeout pauses (filesystem-only), connect
// resumes and refreshes the soft deadline; snapshots keep it running.
func TestFacadePauseOnTimeout(t *testing.T) {
	lb, c := open(t, nil)
	ctx := context.Background()
	sbx, err := facade.Create(ctx, c, &facade.CreateOptions{Timeout: 10 * time.Minute,
		Lifecycle: facade.Lifecycle{OnTimeout: facade.OnTimeoutPause, AutoResume: true}})
	must(t, err, "Create")
	must(t, sbx.Files().Write(ctx, "/workspace/keep.txt", []byte("kept")), "Write")
	snap, err := sbx.CreateSnapshot(ctx, "s1", "")
	must(t, err, "CreateSnapshot")
	if snap.Name != "s1" {
		t.Fatalf("snapshot %+v", snap)
	}
	if st, _ := sbx.State(ctx); st != facade.StateRunning {
		t.Fatalf("state after snapshot %s", st)
	}
	must(t, lb.AdvanceClock(601*time.Second), "AdvanceClock")
	must(t, lb.Quiesce(10*time.Second), "Quiesce")
	info, err := sbx.GetInfo(ctx)
	must(t, err, "GetInfo")
	if info.State != facade.StatePaused || info.TemplateID != "default" {
		t.Fatalf("after the timeout %+v", info)
	}
	same, err := facade.Connect(ctx, c, sbx.ID(), 2*time.Minute)
	must(t, err, "Connect")
	info, err = same.GetInfo(ctx)
	must(t, err, "GetInfo")
	if info.State != facade.StateRunning || info.EndAt.Sub(lb.Now()) > 121*time.Second || info.EndAt.Sub(lb.Now()) < 119*time.Second {
		t.Fatalf("after connect %+v (now %s)", info, lb.Now())
	}
	b, err := same.Files().Read(ctx, "/workspace/keep.txt")
	if err != nil || string(b) != "kept" {
		t.Fatalf("file after connect: %q %v", b, err)
	}
	ok, err := same.Files().Exists(ctx, "/workspace/nope")
	if err != nil || ok {
		t.Fatalf("Exists missing: %v %v", ok, err)
	}
	must(t, same.SetTimeout(ctx, 5*time.Minute), "SetTimeout")
}

// UC-08: the paginator over states.
func TestFacadeList(t *testing.T) {
	_, c := open(t, nil)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		sbx, err := facade.Create(ctx, c, nil)
		must(t, err, "Create")
		ids = append(ids, sbx.ID())
	}
	for _, id := range ids[:2] {
		must(t, facade.Pause(ctx, c, id), "Pause")
	}
	p, err := facade.List(c, &facade.Query{States: []facade.State{facade.StatePaused}}, 1)
	must(t, err, "List")
	var paused []string
	for p.HasNext {
		items, err := p.NextItems(ctx)
		must(t, err, "NextItems")
		for _, it := range items {
			if it.State != facade.StatePaused {
				t.Fatalf("listed %+v", it)
			}
			paused = append(paused, it.SandboxID)
		}
	}
	if len(paused) != 2 {
		t.Fatalf("paused %v", paused)
	}
	p, err = facade.List(c, &facade.Query{States: []facade.State{facade.StateRunning, facade.StatePaused, facade.StateKilled}}, 2)
	must(t, err, "List")
	n := 0
	for _, err := range p.All(ctx) {
		must(t, err, "All")
		n++
	}
	if n != 5 || p.NextToken() != "" {
		t.Fatalf("%d listed, token %q", n, p.NextToken())
	}
	if _, err := facade.List(c, nil, 500); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("limit 500: %v", err)
	}
}

// Bad input, and a deployment without memory checkpoints: pause refuses
// and the sandbox keeps running (no fallback).
func TestFacadeErrors(t *testing.T) {
	_, c := open(t, &sandbox0.LocalOptions{ManualClock: true, DisableMemoryCheckpoints: true})
	ctx := context.Background()
	if _, err := facade.Create(ctx, c, &facade.CreateOptions{Lifecycle: facade.Lifecycle{OnTimeout: "explode"}}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("bad on_timeout: %v", err)
	}
	if _, err := facade.Create(ctx, c, &facade.CreateOptions{Timeout: -time.Second}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("negative timeout: %v", err)
	}
	sbx, err := facade.Create(ctx, c, nil)
	must(t, err, "Create")
	err = sbx.Pause(ctx)
	if !errors.Is(err, sandbox0.ErrUnavailable) {
		t.Fatalf("memory pause without checkpoints: %v", err)
	}
	if st, _ := sbx.State(ctx); st != facade.StateRunning {
		t.Fatalf("state %s", st)
	}
	if _, err := facade.Connect(ctx, c, "sb_unknown", 0); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("connect unknown: %v", err)
	}
}
