package sandbox0_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// A paused sandbox's files and memory round trip: a file written before a
// memory pause (binary, with NULs) and a REPL variable are both there after
// the memory resume.
func TestFilesAndMemoryRoundTrip(t *testing.T) {
	_, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	data := []byte("line\x00with\x00nuls\n\xff\xfe")
	must(t, sb.WriteFile(ctx, "/workspace/data.bin", data), "WriteFile")
	rc, err := sb.CreateContext(ctx, sandbox0.CreateContextRequest{})
	must(t, err, "CreateContext")
	_, err = sb.ContextExec(ctx, rc.ID, "COUNTER=forty-one")
	must(t, err, "exec")
	opts := &sandbox0.SandboxLifecycleWaitOptions{Memory: true}
	paused, err := c.PauseSandboxAndWait(ctx, sb.ID, opts)
	must(t, err, "memory pause")
	if !paused.Paused || paused.RuntimeID != "" {
		t.Fatalf("paused %+v", paused)
	}
	_, err = c.ResumeSandboxAndWait(ctx, sb.ID, opts)
	must(t, err, "memory resume")
	got, err := sb.ReadFile(ctx, "/workspace/data.bin")
	must(t, err, "ReadFile")
	if !bytes.Equal(got, data) {
		t.Fatalf("file after resume %q", got)
	}
	out, err := sb.ContextExec(ctx, rc.ID, "echo $COUNTER")
	must(t, err, "exec after resume")
	if out.Stdout != "forty-one\n" {
		t.Fatalf("REPL after memory resume: %q", out.Stdout)
	}
	// A filesystem-only pause keeps the file but ends the process.
	_, err = c.PauseSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "filesystem pause")
	_, err = c.ResumeSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "filesystem resume")
	if got, err := sb.ReadFile(ctx, "/workspace/data.bin"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file after filesystem resume: %q %v", got, err)
	}
	if _, err := sb.GetContext(ctx, rc.ID); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("context after a filesystem pause: %v", err)
	}
}

// The files API: write, read, stat, list, mkdir, move, delete and errors.
func TestFilesAPI(t *testing.T) {
	_, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	must(t, c.Mkdir(ctx, sb.ID, "/workspace/a/b", true), "Mkdir")
	if err := c.Mkdir(ctx, sb.ID, "/workspace/a/b", false); !errors.Is(err, sandbox0.ErrConflict) {
		t.Fatalf("mkdir existing: %v", err)
	}
	must(t, c.WriteFile(ctx, sb.ID, "a/b/f.txt", []byte("hello")), "WriteFile relative")
	fi, err := c.StatFile(ctx, sb.ID, "/workspace/a/b/f.txt")
	must(t, err, "StatFile")
	if fi.Type != sandbox0.FileTypeFile || fi.Size != 5 || fi.Name != "f.txt" || fi.Mode.Perm() != 0o644 {
		t.Fatalf("stat %+v", fi)
	}
	list, err := c.ListFiles(ctx, sb.ID, "/workspace/a")
	must(t, err, "ListFiles")
	if len(list) != 1 || list[0].Name != "b" || list[0].Type != sandbox0.FileTypeDir {
		t.Fatalf("list %+v", list)
	}
	must(t, c.MoveFile(ctx, sb.ID, "/workspace/a/b/f.txt", "/workspace/c/g.txt"), "MoveFile")
	if b, err := c.ReadFile(ctx, sb.ID, "/workspace/c/g.txt"); err != nil || string(b) != "hello" {
		t.Fatalf("moved file: %q %v", b, err)
	}
	must(t, c.WriteFile(ctx, sb.ID, "/workspace/empty", nil), "write empty")
	if b, err := c.ReadFile(ctx, sb.ID, "/workspace/empty"); err != nil || b == nil || len(b) != 0 {
		t.Fatalf("empty file: %q %v", b, err)
	}
	must(t, c.DeleteFile(ctx, sb.ID, "/workspace/c"), "DeleteFile")
	_, err = c.ReadFile(ctx, sb.ID, "/workspace/c/g.txt")
	if api := asAPI(t, err); api.Code != "file_not_found" || !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("read deleted: %+v", api)
	}
	if err := c.WriteFile(ctx, sb.ID, "", []byte("x")); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("empty path: %v", err)
	}
}

// Lifecycle calls and listings on the embedded backend.
func TestLifecycleAPI(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c, sandbox0.WithSandboxTTL(60), sandbox0.WithSandboxHardTTL(3600),
		sandbox0.WithSandboxAutoResume(false), sandbox0.WithSandboxEnvVars(map[string]string{"A": "1"}))
	if sb.ID == "" || sb.Status != sandbox0.SandboxStatusRunning {
		t.Fatalf("claimed %+v", sb)
	}
	got, err := c.GetSandbox(ctx, sb.ID)
	must(t, err, "GetSandbox")
	if got.AutoResume || got.ExpiresAt.IsZero() || got.HardExpiresAt.IsZero() || got.Template != "default" || got.RuntimeGeneration < 1 {
		t.Fatalf("got %+v", got)
	}
	st, err := c.StatusSandbox(ctx, sb.ID)
	must(t, err, "StatusSandbox")
	if st.Status != sandbox0.SandboxStatusRunning {
		t.Fatalf("status %+v", st)
	}
	ttl := int32(120)
	up, err := c.UpdateSandbox(ctx, sb.ID, sandbox0.SandboxUpdateRequest{Config: sandbox0.SandboxConfig{TTL: &ttl}})
	must(t, err, "UpdateSandbox")
	if !up.ExpiresAt.After(got.ExpiresAt) {
		t.Fatalf("ttl not re-armed: %s vs %s", up.ExpiresAt, got.ExpiresAt)
	}
	bad := int32(99999)
	if _, err := c.UpdateSandbox(ctx, sb.ID, sandbox0.SandboxUpdateRequest{Config: sandbox0.SandboxConfig{TTL: &bad}}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("ttl > hard_ttl: %v", err)
	}
	rf, err := c.RefreshSandbox(ctx, sb.ID, &sandbox0.SandboxRefreshRequest{Duration: 600})
	must(t, err, "RefreshSandbox")
	if rf.ExpiresAt.Sub(lb.Now()) < 590*time.Second {
		t.Fatalf("refresh: expires %s now %s", rf.ExpiresAt, lb.Now())
	}
	// The soft TTL pauses it on the virtual clock.
	must(t, lb.AdvanceClock(601*time.Second), "AdvanceClock")
	must(t, lb.Quiesce(10*time.Second), "Quiesce")
	got, err = c.GetSandbox(ctx, sb.ID)
	must(t, err, "GetSandbox")
	if !got.Paused {
		t.Fatalf("TTL did not pause: %+v", got)
	}
	if _, err := c.RefreshSandbox(ctx, sb.ID, nil); !errors.Is(err, sandbox0.ErrConflict) {
		t.Fatalf("refresh paused: %v", err)
	}
	// auto_resume false: runtime access is refused.
	_, err = c.ReadFile(ctx, sb.ID, "/workspace/x")
	if api := asAPI(t, err); api.Reason != "auto_resume_disabled" {
		t.Fatalf("paused read: %+v", api)
	}

	// Listings: pages and the iterators.
	for i := 0; i < 4; i++ {
		claim(t, c)
	}
	two := 2
	page, err := c.ListSandboxes(ctx, &sandbox0.ListSandboxesOptions{Limit: &two})
	must(t, err, "ListSandboxes")
	if page.Count != 5 || !page.HasMore || len(page.Sandboxes) != 2 {
		t.Fatalf("page %+v", page)
	}
	yes := true
	paused, err := c.ListSandboxes(ctx, &sandbox0.ListSandboxesOptions{Paused: &yes})
	must(t, err, "ListSandboxes paused")
	if paused.Count != 1 || paused.Sandboxes[0].ID != sb.ID {
		t.Fatalf("paused filter %+v", paused)
	}
	pages, seen := 0, map[string]bool{}
	for p, err := range c.SandboxPages(ctx, &sandbox0.ListSandboxesOptions{Limit: &two}) {
		must(t, err, "SandboxPages")
		pages++
		for _, s := range p.Sandboxes {
			seen[s.ID] = true
		}
	}
	if pages != 3 || len(seen) != 5 {
		t.Fatalf("%d pages, %d sandboxes", pages, len(seen))
	}
	n := 0
	for s, err := range c.AllSandboxes(ctx, &sandbox0.ListSandboxesOptions{Limit: &two}) {
		must(t, err, "AllSandboxes")
		if n++; n == 3 {
			break
		}
		_ = s
	}
	for _, err := range c.AllSandboxes(ctx, &sandbox0.ListSandboxesOptions{Status: "sleeping"}) {
		if !errors.Is(err, sandbox0.ErrInvalidArgument) {
			t.Fatalf("bad status filter: %v", err)
		}
	}
	zero := 0
	if _, err := c.ListSandboxes(ctx, &sandbox0.ListSandboxesOptions{Limit: &zero}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("limit 0: %v", err)
	}
	other := claim(t, c)
	if err := c.WaitForSandboxDeleted(ctx, other.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: 2 * time.Second}); !errors.Is(err, sandbox0.ErrTimeout) {
		t.Fatalf("deletion wait of a live sandbox: %v", err)
	}
	must(t, c.DeleteSandbox(ctx, sb.ID), "DeleteSandbox")
	must(t, c.WaitForSandboxDeleted(ctx, sb.ID, nil), "WaitForSandboxDeleted")
	if err := c.DeleteSandbox(ctx, sb.ID); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// Snapshots, restore and forks.
func TestSnapshotsRestoreFork(t *testing.T) {
	_, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	must(t, sb.WriteFile(ctx, "/workspace/v", []byte("one")), "write")
	snap, err := c.CreateSandboxRootFSSnapshot(ctx, sb.ID, &sandbox0.CreateSandboxRootFSSnapshotRequest{Name: "v1", Description: "first"})
	must(t, err, "CreateSandboxRootFSSnapshot")
	if snap.ID == "" || snap.SandboxID != sb.ID || snap.Name != "v1" || snap.Description != "first" || snap.CreatedAt.IsZero() {
		t.Fatalf("snapshot %+v", snap)
	}
	list, err := c.ListSandboxRootFSSnapshots(ctx, sb.ID)
	must(t, err, "ListSandboxRootFSSnapshots")
	if list.Count != 1 || list.Snapshots[0].ID != snap.ID {
		t.Fatalf("list %+v", list)
	}
	one, err := c.GetSandboxRootFSSnapshot(ctx, snap.ID)
	must(t, err, "GetSandboxRootFSSnapshot")
	if one.Name != "v1" {
		t.Fatalf("get %+v", one)
	}
	must(t, sb.WriteFile(ctx, "/workspace/v", []byte("two")), "write")
	if _, err := c.RestoreSandboxRootFS(ctx, sb.ID, sandbox0.RestoreSandboxRootFSRequest{SnapshotID: snap.ID}); !errors.Is(err, sandbox0.ErrConflict) {
		t.Fatalf("restore running: %v", err)
	}
	_, err = c.PauseSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "pause")
	res, err := c.RestoreSandboxRootFS(ctx, sb.ID, sandbox0.RestoreSandboxRootFSRequest{SnapshotID: snap.ID})
	must(t, err, "RestoreSandboxRootFS")
	if res.SnapshotID != snap.ID || res.Status != sandbox0.SandboxStatusPaused {
		t.Fatalf("restore %+v", res)
	}
	_, err = c.ResumeSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "resume")
	if b, _ := sb.ReadFile(ctx, "/workspace/v"); string(b) != "one" {
		t.Fatalf("after restore: %q", b)
	}
	child, err := c.ForkSandbox(ctx, sb.ID, nil)
	must(t, err, "ForkSandbox")
	if child.ID == sb.ID || !child.Paused {
		t.Fatalf("child %+v", child)
	}
	mchild, err := c.ForkSandboxWithOptions(ctx, sb.ID, &sandbox0.ForkSandboxRequest{Memory: true}, &sandbox0.ForkSandboxOptions{IdempotencyKey: "fork-1"})
	for i := 0; err != nil && errors.Is(err, sandbox0.ErrUnavailable) && i < 50; i++ {
		mchild, err = c.ForkSandboxWithOptions(ctx, sb.ID, &sandbox0.ForkSandboxRequest{Memory: true}, &sandbox0.ForkSandboxOptions{IdempotencyKey: "fork-1"})
	}
	must(t, err, "memory fork")
	if !mchild.Paused || mchild.ID == child.ID {
		t.Fatalf("memory child %+v", mchild)
	}
	must(t, c.DeleteSandboxRootFSSnapshot(ctx, snap.ID), "DeleteSandboxRootFSSnapshot")
	if _, err := c.GetSandboxRootFSSnapshot(ctx, snap.ID); !errors.Is(err, sandbox0.ErrNotFound) {
		t.Fatalf("deleted snapshot: %v", err)
	}
}

// Network policy, contexts and the generic runtime call.
func TestNetworkContextsRuntimeCall(t *testing.T) {
	_, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	p, err := c.GetSandboxNetworkPolicy(ctx, sb.ID)
	must(t, err, "GetSandboxNetworkPolicy")
	if p.Mode != "allow-all" {
		t.Fatalf("default policy %s", p.Raw)
	}
	p, err = c.UpdateSandboxNetworkPolicy(ctx, sb.ID, sandbox0.NetworkPolicy{Mode: "block-all"})
	must(t, err, "UpdateSandboxNetworkPolicy")
	if p.Mode != "block-all" {
		t.Fatalf("stored policy %s", p.Raw)
	}
	if _, err := c.UpdateSandboxNetworkPolicy(ctx, sb.ID, map[string]any{"mode": "sometimes"}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("bad policy: %v", err)
	}
	if p, _ = c.GetSandboxNetworkPolicy(ctx, sb.ID); p.Mode != "block-all" {
		t.Fatalf("bad policy replaced the old one: %s", p.Raw)
	}

	cmd, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{Cmd: &sandbox0.ContextCommand{Command: []string{"echo", "hi"}}, WaitUntilDone: true})
	must(t, err, "CreateContext cmd")
	if cmd.ID == "" || cmd.Type != "cmd" {
		t.Fatalf("cmd context %s", cmd.Raw)
	}
	repl, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{Type: "repl", CWD: "/workspace", EnvVars: map[string]string{"X": "y"}})
	must(t, err, "CreateContext repl")
	out, err := c.ContextExec(ctx, sb.ID, repl.ID, "echo $X; pwd")
	must(t, err, "ContextExec")
	if out.Stdout != "y\n/workspace\n" {
		t.Fatalf("exec %s", out.Raw)
	}
	g, err := c.GetContext(ctx, sb.ID, repl.ID)
	must(t, err, "GetContext")
	if g.ID != repl.ID || !g.Running {
		t.Fatalf("get %s", g.Raw)
	}
	res, err := c.RuntimeCall(ctx, "GET", sb.ID, "/contexts", nil, "")
	must(t, err, "RuntimeCall list")
	var lst struct {
		Contexts []json.RawMessage `json:"contexts"`
	}
	if err := json.Unmarshal(res.Data, &lst); err != nil || res.StatusCode != 200 || len(lst.Contexts) < 1 {
		t.Fatalf("contexts list %d %s", res.StatusCode, res.Data)
	}
	must(t, c.DeleteContext(ctx, sb.ID, repl.ID), "DeleteContext")
	_, err = c.GetContext(ctx, sb.ID, repl.ID)
	if api := asAPI(t, err); api.Code != "context_not_found" {
		t.Fatalf("deleted context: %+v", api)
	}
	if _, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{Extra: map[string]any{"bogus": 1}}); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("unknown member: %v", err)
	}
}

// The local backend's own calls: templates, inspection, GC, manager
// restart, clock.
func TestLocalBackend(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	tree := t.TempDir()
	must(t, os.WriteFile(filepath.Join(tree, "hello.txt"), []byte("from template"), 0o644), "write tree")
	must(t, lb.BuildTemplate("custom", tree, &sandbox0.TemplateOptions{EphemeralMounts: []string{"/scratch"}}), "BuildTemplate")
	if err := lb.BuildTemplate("Bad/Name", "", nil); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("bad template name: %v", err)
	}
	sb, err := c.ClaimSandbox(ctx, "custom")
	must(t, err, "claim custom")
	if b, err := sb.ReadFile(ctx, "/hello.txt"); err != nil || string(b) != "from template" {
		t.Fatalf("template file: %q %v", b, err)
	}
	insp, err := lb.Inspect(sb.ID)
	must(t, err, "Inspect")
	if len(insp) == 0 {
		t.Fatal("empty inspection")
	}
	must(t, lb.GC(), "GC")
	must(t, lb.RestartManager(), "RestartManager")
	if _, err := c.GetSandbox(ctx, sb.ID); err != nil {
		t.Fatalf("after manager restart: %v", err)
	}
	now := lb.Now()
	must(t, lb.AdvanceClock(time.Hour), "AdvanceClock")
	if d := lb.Now().Sub(now); d != time.Hour {
		t.Fatalf("clock moved %s", d)
	}
	if err := lb.ArmFault("carrier", sandbox0.FaultMode(9), 1, 0); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("unknown fault mode: %v", err)
	}
	real, _ := openLocal(t, &sandbox0.LocalOptions{})
	if err := real.AdvanceClock(time.Second); !errors.Is(err, sandbox0.ErrUnsupported) {
		t.Fatalf("advance a real clock: %v", err)
	}
	if sandbox0.Version() == "" || c.BaseURL() != "local:"+lb.Dir() {
		t.Fatalf("version %q base %q", sandbox0.Version(), c.BaseURL())
	}
	lb.Close()
	if _, err := c.GetSandbox(ctx, sb.ID); err == nil {
		t.Fatal("client of a closed backend still works")
	}
	if _, err := lb.Client(); err == nil {
		t.Fatal("Client on a closed backend")
	}
}
