package sandbox0_test

import (
	"context"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// seedSnippet is the product document's Go example ("Explicit Memory
// Pause And Resume"), verbatim between the markers, in a function giving
// it the names it uses.
func seedSnippet(ctx context.Context, client *sandbox0.Client, sandbox *sandbox0.Sandbox) error {
	// --- seed snippet (000_59422c18284dadc1.txt), unchanged ---
	options := &sandbox0.SandboxLifecycleWaitOptions{
		Memory:  true,
		Timeout: 6 * time.Minute,
	}
	if _, err := client.PauseSandboxAndWait(ctx, sandbox.ID, options); err != nil {
		return err
	}
	if _, err := client.ResumeSandboxAndWait(ctx, sandbox.ID, options); err != nil {
		return err
	}
	// --- end of seed snippet ---
	return nil
}

// CL-16: the Go snippet of CL-16 against `s0 serve` on loopback; the REPL's
// state (memory) survives the memory pause and resume.
func TestSeedSnippetServe(t *testing.T) {
	srv := startServer(t)
	client := srv.client(t)
	ctx := context.Background()
	sandbox := claim(t, client)
	rc, err := sandbox.CreateContext(ctx, sandbox0.CreateContextRequest{Type: "repl"})
	must(t, err, "CreateContext")
	_, err = sandbox.ContextExec(ctx, rc.ID, "SEED=kept-in-memory")
	must(t, err, "exec")
	before, err := client.GetSandbox(ctx, sandbox.ID)
	must(t, err, "GetSandbox")

	must(t, seedSnippet(ctx, client, sandbox), "seed snippet")

	after, err := client.GetSandbox(ctx, sandbox.ID)
	must(t, err, "GetSandbox")
	if after.Status != sandbox0.SandboxStatusRunning || after.Paused || after.RuntimeGeneration != before.RuntimeGeneration+1 {
		t.Fatalf("after resume: status %s paused %v generation %d (before %d)", after.Status, after.Paused, after.RuntimeGeneration, before.RuntimeGeneration)
	}
	out, err := sandbox.ContextExec(ctx, rc.ID, "echo $SEED")
	must(t, err, "exec after resume")
	if out.Stdout != "kept-in-memory\n" {
		t.Fatalf("REPL variable after memory resume: %q", out.Stdout)
	}
}

// The same snippet on the embedded backend (virtual time).
func TestSeedSnippetLocal(t *testing.T) {
	_, client := openLocal(t, nil)
	sandbox := claim(t, client)
	must(t, seedSnippet(context.Background(), client, sandbox), "seed snippet")
}
