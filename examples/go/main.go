// Command quickstart shows the Go package offline, on the embedded local
// backend (no server, no network, virtual time):
//
//   - claims a sandbox, writes a file and sets a REPL variable;
//   - runs the product document's memory pause and resume (CL-16's Go
//     snippet) and shows that the file and the variable survived, and how
//     runtime_id and runtime_generation moved;
//   - arms the capture fault and shows the typed error a failed memory
//     pause returns (errors.As), then a wait timeout and a cancelled wait;
//   - uses the UCloud-style facade (create, pause, connect, kill).
//
// It exits non-zero if any expectation fails.
//
//	go run .            (from examples/go; see bindings/go/README.md for the environment)
//	go run . DATA_DIR   (keep the data directory)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
	"github.com/libsandbox0/libsandbox0/bindings/go/facade"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run() error {
	dir := ""
	if len(os.Args) > 1 {
		dir = os.Args[1]
	} else {
		tmp, err := os.MkdirTemp("", "s0-go-quickstart-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp + "/data"
	}
	local, err := sandbox0.OpenLocal(dir, &sandbox0.LocalOptions{ManualClock: true})
	if err != nil {
		return err
	}
	defer local.Close()
	client, err := local.Client()
	if err != nil {
		return err
	}
	defer client.Close()
	ctx := context.Background()

	sandbox, err := client.ClaimSandbox(ctx, "default")
	if err != nil {
		return err
	}
	before, err := client.GetSandbox(ctx, sandbox.ID)
	if err != nil {
		return err
	}
	fmt.Printf("claimed %s: %s, runtime %s, generation %d\n", before.ID, before.Status, before.RuntimeID, before.RuntimeGeneration)
	if err := sandbox.WriteFile(ctx, "/workspace/notes.txt", []byte("written before the pause")); err != nil {
		return err
	}
	repl, err := sandbox.CreateContext(ctx, sandbox0.CreateContextRequest{Type: "repl"})
	if err != nil {
		return err
	}
	if _, err := sandbox.ContextExec(ctx, repl.ID, "GREETING=hello"); err != nil {
		return err
	}

	// The product document's snippet, unchanged.
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

	after, err := client.GetSandbox(ctx, sandbox.ID)
	if err != nil {
		return err
	}
	notes, err := sandbox.ReadFile(ctx, "/workspace/notes.txt")
	if err != nil {
		return err
	}
	out, err := sandbox.ContextExec(ctx, repl.ID, "echo $GREETING")
	if err != nil {
		return err
	}
	fmt.Printf("after memory pause+resume: %s, runtime %s, generation %d; file %q; $GREETING %q\n",
		after.Status, after.RuntimeID, after.RuntimeGeneration, notes, out.Stdout)
	if string(notes) != "written before the pause" || out.Stdout != "hello\n" || after.RuntimeGeneration != before.RuntimeGeneration+1 {
		return errors.New("state did not survive the memory pause")
	}

	// A failed memory capture is an error, never a silent filesystem pause.
	if err := local.ArmFault("capture@after-authorize", sandbox0.FaultFail, 1, 0); err != nil {
		return err
	}
	_, err = client.PauseSandboxAndWait(ctx, sandbox.ID, options)
	var failed *sandbox0.SandboxLifecycleFailedError
	if !errors.As(err, &failed) {
		return fmt.Errorf("want a lifecycle failure, got %v", err)
	}
	fmt.Printf("capture fault: %v (action %q, last status %s)\n", err, failed.Action, failed.LastSandbox.Status)

	// A wait budget that runs out (the node is unreachable; virtual time).
	other, err := client.ClaimSandbox(ctx, "default")
	if err != nil {
		return err
	}
	if err := local.ArmFault("node_channel", sandbox0.FaultFail, 0, 0); err != nil {
		return err
	}
	_, err = client.PauseSandboxAndWait(ctx, other.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: 30 * time.Second})
	var timeout *sandbox0.SandboxWaitTimeoutError
	if !errors.As(err, &timeout) {
		return fmt.Errorf("want a wait timeout, got %v", err)
	}
	fmt.Printf("node unreachable: %v\n", err)
	if err := local.ReleaseFault("node_channel"); err != nil {
		return err
	}

	// A missing sandbox is an *APIError that matches ErrNotFound.
	_, err = client.GetSandbox(ctx, "sb_missing")
	var api *sandbox0.APIError
	if !errors.As(err, &api) || !errors.Is(err, sandbox0.ErrNotFound) {
		return fmt.Errorf("want a 404, got %v", err)
	}
	fmt.Printf("missing sandbox: %v\n", err)

	// The UCloud-style facade.
	sbx, err := facade.Create(ctx, client, &facade.CreateOptions{Timeout: 10 * time.Minute,
		Lifecycle: facade.Lifecycle{OnTimeout: facade.OnTimeoutPause}})
	if err != nil {
		return err
	}
	if err := sbx.Pause(ctx); err != nil {
		return err
	}
	state, err := sbx.State(ctx)
	if err != nil {
		return err
	}
	same, err := facade.Connect(ctx, client, sbx.ID(), 5*time.Minute)
	if err != nil {
		return err
	}
	running, err := same.IsRunning(ctx)
	if err != nil || !running {
		return fmt.Errorf("facade connect: running=%v %v", running, err)
	}
	if err := same.Kill(ctx); err != nil {
		return err
	}
	fmt.Printf("facade: created, paused (%s), connected, killed %s\n", state, sbx.ID())
	return nil
}
