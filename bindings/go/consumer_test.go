package sandbox0_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goTool is the go command running these tests.
func goTool(t testing.TB) string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no go command: %v", err)
	}
	return p
}

// runGo runs the go command in dir with GOPROXY=off (nothing may be
// fetched) and returns its combined output.
func runGo(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

const consumerMain = `package main

import (
	"context"
	"fmt"
	"os"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

func run(ctx context.Context, client *sandbox0.Client, sandbox *sandbox0.Sandbox) error {
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
	return nil
}

func main() {
	ctx := context.Background()
	client, err := sandbox0.NewClientFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer client.Close()
	sandbox, err := client.ClaimSandbox(ctx, "default")
	if err == nil {
		err = run(ctx, client, sandbox)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("consumer ok", sandbox.ID)
}
`

// The consumer check: a throwaway module that requires this one through a
// replace, built with GOPROXY=off, runs the snippet of CL-16 against s0 serve
// (configured from SANDBOX0_BASE_URL and SANDBOX0_TOKEN).
func TestConsumerModule(t *testing.T) {
	srv := startServer(t)
	here, err := filepath.Abs(".")
	must(t, err, "Abs")
	dir := t.TempDir()
	gomod := "module example.com/consumer\n\ngo 1.23\n\nrequire github.com/libsandbox0/libsandbox0/bindings/go v0.0.0\n\n" +
		"replace github.com/libsandbox0/libsandbox0/bindings/go => " + here + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644), "go.mod")
	must(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(consumerMain), 0o644), "main.go")
	out := runGo(t, dir, []string{"SANDBOX0_BASE_URL=" + srv.URL, "SANDBOX0_TOKEN=" + srv.Token}, "run", ".")
	if !strings.Contains(out, "consumer ok sb") {
		t.Fatalf("consumer output:\n%s", out)
	}
}

// examples/go runs offline and succeeds.
func TestExampleQuickstart(t *testing.T) {
	out := runGo(t, "../../examples/go", nil, "run", ".")
	if !strings.HasSuffix(strings.TrimSpace(out), "ok") || !strings.Contains(out, "capture fault") {
		t.Fatalf("example output:\n%s", out)
	}
}
