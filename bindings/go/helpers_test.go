package sandbox0_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// s0Bin is the s0 executable of the build tree ($S0_BIN overrides).
func s0Bin(t testing.TB) string {
	if b := os.Getenv("S0_BIN"); b != "" {
		return b
	}
	b, err := filepath.Abs("../../build/libsandbox0/cli/s0")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("s0 not built (%v); run ninja -C build or set S0_BIN", err)
	}
	return b
}

// openLocal opens an embedded backend on a fresh directory (manual clock:
// waits run in virtual time) and a client over it; both close at cleanup.
func openLocal(t testing.TB, opts *sandbox0.LocalOptions) (*sandbox0.Local, *sandbox0.Client) {
	t.Helper()
	if opts == nil {
		opts = &sandbox0.LocalOptions{ManualClock: true}
	}
	lb, err := sandbox0.OpenLocal(filepath.Join(t.TempDir(), "data"), opts)
	if err != nil {
		t.Fatalf("OpenLocal: %v", err)
	}
	t.Cleanup(func() { lb.Close() })
	c, err := lb.Client()
	if err != nil {
		t.Fatalf("Local.Client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return lb, c
}

// server is one `s0 serve` on loopback with a known token.
type server struct {
	URL, Token string
	cmd        *exec.Cmd
}

// startServer runs `s0 serve` on a fresh data directory, port 0, and waits
// for its server.json to name it; the server is stopped at cleanup (SIGTERM,
// then SIGKILL), and dies with the test process (Pdeathsig).
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	token := fmt.Sprintf("s0_gotest%d", time.Now().UnixNano())
	args := append([]string{"serve", "--data", data, "--listen", "127.0.0.1:0", "--token", token, "--quiet", "--runtime", "sim"}, extra...)
	cmd := exec.Command(s0Bin(t), args...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		var info struct {
			URL string `json:"url"`
			PID int    `json:"pid"`
		}
		b, err := os.ReadFile(filepath.Join(data, "server.json"))
		if err == nil && json.Unmarshal(b, &info) == nil && info.PID == cmd.Process.Pid {
			return &server{URL: info.URL, Token: token, cmd: cmd}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("s0 serve exited early (%v):\n%s", err, log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("s0 serve wrote no server.json in 30 s:\n%s", log.String())
		}
	}
}

// client makes a client of the server; closed at cleanup.
func (s *server) client(t testing.TB) *sandbox0.Client {
	t.Helper()
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(s.URL), sandbox0.WithToken(s.Token))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// admin posts a JSON body to an admin endpoint of the server.
func (s *server) admin(t testing.TB, path string, body string) {
	t.Helper()
	s.adminDo(t, "POST", path, body)
}

// release disarms a fault point of the server.
func (s *server) release(t testing.TB, name string) {
	t.Helper()
	s.adminDo(t, "DELETE", "/admin/v1/faults?name="+name, "")
}

func (s *server) adminDo(t testing.TB, method, path string, body string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.Status)
		t.Fatalf("admin %s: %s", path, b.String())
	}
}

// claim claims a sandbox of the default template.
func claim(t testing.TB, c *sandbox0.Client, opts ...sandbox0.SandboxOption) *sandbox0.Sandbox {
	t.Helper()
	sb, err := c.ClaimSandbox(context.Background(), "default", opts...)
	if err != nil {
		t.Fatalf("ClaimSandbox: %v", err)
	}
	return sb
}

// must fails the test on err.
func must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// asAPI returns err as *APIError or fails.
func asAPI(t testing.TB, err error) *sandbox0.APIError {
	t.Helper()
	var api *sandbox0.APIError
	if !errors.As(err, &api) {
		t.Fatalf("want *APIError, got %T %v", err, err)
	}
	return api
}

// toJSON renders v as JSON text.
func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
