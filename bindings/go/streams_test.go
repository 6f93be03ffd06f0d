package sandbox0_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Streams (streams.go over stream_cgo.go) on both transports: a Local
// client (in process) and an HTTP client of `s0 serve` (a WebSocket).

func streamClients(t *testing.T) map[string]*sandbox0.Client {
	_, local := openLocal(t, &sandbox0.LocalOptions{})
	return map[string]*sandbox0.Client{"local": local, "http": startServer(t).client(t)}
}

func recvCtx(t *testing.T, cs *sandbox0.ContextStream) *sandbox0.ContextMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := cs.Recv(ctx)
	if err != nil || m == nil {
		t.Fatalf("Recv: %v %v", m, err)
	}
	return m
}

func TestStreams(t *testing.T) {
	ctx := context.Background()
	for name, c := range streamClients(t) {
		t.Run(name, func(t *testing.T) {
			t.Run("ST-01 output order and exit", func(t *testing.T) {
				sb := claim(t, c)
				cr, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{
					Cmd: &sandbox0.ContextCommand{Command: []string{"sh", "-c", "echo one; echo two >&2; echo three"}}})
				must(t, err, "CreateContext")
				cs, err := sb.ConnectWSContext(ctx, cr.ID)
				must(t, err, "ConnectWSContext")
				defer cs.Close()
				want := [][2]string{{"stdout", "one\nthree\n"}, {"stderr", "two\n"}}
				for _, w := range want {
					if m := recvCtx(t, cs); m.Type != "output" || m.Source != w[0] || m.Data != w[1] {
						t.Fatalf("got %+v, want %v", m, w)
					}
				}
				if m := recvCtx(t, cs); m.Type != "done" || m.ExitCode == nil || *m.ExitCode != 0 || m.State != "stopped" {
					t.Fatalf("terminal done: %+v", m)
				}
				if m, err := cs.Recv(ctx); m != nil || err != nil {
					t.Fatalf("after the end: %+v %v", m, err)
				}
				if code, why := cs.CloseCode(); code != 1000 || why != "process exited" {
					t.Fatalf("close %d %q", code, why)
				}
			})
			t.Run("ST-01 input echo and signal", func(t *testing.T) {
				sb := claim(t, c)
				cr, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{Type: "repl"})
				must(t, err, "CreateContext")
				cs, err := c.ConnectWSContext(ctx, sb.ID, cr.ID)
				must(t, err, "ConnectWSContext")
				defer cs.Close()
				must(t, cs.SendInput("echo hello\n", "r1"), "SendInput")
				must(t, cs.SendInput("echo world\n", "r2"), "SendInput")
				for _, w := range [][2]string{{"output", "hello\n"}, {"done", "r1"}, {"output", "world\n"}, {"done", "r2"}} {
					m := recvCtx(t, cs)
					if got := m.Data + m.RequestID; m.Type != w[0] || got != w[1] {
						t.Fatalf("got %+v, want %v", m, w)
					}
				}
				must(t, cs.SendSignal("KILL"), "SendSignal")
				if m := recvCtx(t, cs); m.Type != "done" || m.ExitCode == nil || *m.ExitCode != 137 || m.State != "killed" {
					t.Fatalf("after KILL: %+v", m)
				}
				if m, err := cs.Recv(ctx); m != nil || err != nil {
					t.Fatalf("after the end: %+v %v", m, err)
				}
				if err := cs.SendInput("echo late\n", ""); !errors.Is(err, sandbox0.ErrGone) {
					t.Fatalf("send after the end: %v", err)
				}
			})
			t.Run("ST-02 session replay from a cursor", func(t *testing.T) {
				sb := claim(t, c)
				r, err := c.RuntimeCall(ctx, "POST", sb.ID, "/sessions",
					map[string]any{"command": []string{"sh", "-c", "echo a; echo b; echo c"}}, "")
				must(t, err, "create session")
				var ses struct {
					ID string `json:"id"`
				}
				must(t, json.Unmarshal(r.Data, &ses), "session")
				all, err := sb.AttachSession(ctx, ses.ID, 0)
				must(t, err, "AttachSession")
				var seqs []int64
				for len(seqs) < 3 {
					m, err := all.Recv(ctx)
					if err != nil || m == nil || m.Type != "event" {
						t.Fatalf("event %d: %+v %v", len(seqs), m, err)
					}
					seqs = append(seqs, m.Seq())
				}
				all.Close()
				if !(seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
					t.Fatalf("seqs out of order: %v", seqs)
				}
				tail, err := c.AttachSession(ctx, sb.ID, ses.ID, seqs[0])
				must(t, err, "AttachSession after")
				defer tail.Close()
				for _, want := range seqs[1:] {
					if m, err := tail.Recv(ctx); err != nil || m.Seq() != want {
						t.Fatalf("replay: %+v %v, want seq %d", m, err, want)
					}
				}
				if _, err := c.AttachSession(ctx, sb.ID, ses.ID, -1); !errors.Is(err, sandbox0.ErrInvalidArgument) {
					t.Fatalf("after -1: %v", err)
				}
			})
			t.Run("ST-03 FS-05 watch events on write and remove, ended by a pause", func(t *testing.T) {
				sb := claim(t, c)
				must(t, sb.Mkdir(ctx, "/workspace/d", false), "Mkdir")
				events, errs, stop, err := sb.WatchFiles(ctx, "/workspace/d", false)
				must(t, err, "WatchFiles")
				defer stop()
				if m := <-events; m.Type != "subscribed" || m.WatchID == "" {
					t.Fatalf("first message: %+v", m)
				}
				must(t, sb.WriteFile(ctx, "/workspace/d/f", []byte("1")), "WriteFile")
				must(t, sb.WriteFile(ctx, "/workspace/other", []byte("1")), "WriteFile")
				must(t, sb.DeleteFile(ctx, "/workspace/d/f"), "DeleteFile")
				for _, want := range []string{"create", "write", "remove"} {
					if m := <-events; m.Type != "event" || m.Event != want || m.Path != "/workspace/d/f" {
						t.Fatalf("got %+v, want %s", m, want)
					}
				}
				_, err = c.PauseSandboxAndWait(ctx, sb.ID, nil)
				must(t, err, "PauseSandboxAndWait")
				if m, open := <-events; open {
					t.Fatalf("after the pause: %+v", m)
				}
				if err := <-errs; err != nil {
					t.Fatalf("errs after the pause: %v", err)
				}
			})
			t.Run("close mid-stream from another goroutine", func(t *testing.T) {
				sb := claim(t, c)
				cr, err := c.CreateContext(ctx, sb.ID, sandbox0.CreateContextRequest{Type: "repl"})
				must(t, err, "CreateContext")
				cs, err := c.ConnectWSContext(ctx, sb.ID, cr.ID)
				must(t, err, "ConnectWSContext")
				got := make(chan error, 1)
				go func() {
					_, err := cs.Recv(ctx) // nothing comes
					got <- err
				}()
				// the waiting Recv holds no lock a call needs
				if cr2, err := c.GetContext(ctx, sb.ID, cr.ID); err != nil || !cr2.Running {
					t.Fatalf("GetContext while a Recv waits: %+v %v", cr2, err)
				}
				must(t, cs.Close(), "Close")
				select {
				case err := <-got:
					if !errors.Is(err, sandbox0.ErrStreamClosed) {
						t.Fatalf("Recv after Close: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("Recv did not return after Close")
				}
				must(t, cs.Close(), "second Close")
				// a context that ends returns its error; the stream stays usable
				cs2, err := c.ConnectWSContext(ctx, sb.ID, cr.ID)
				must(t, err, "ConnectWSContext")
				defer cs2.Close()
				short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
				defer cancel()
				if _, err := cs2.Recv(short); !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Recv with a short context: %v", err)
				}
				must(t, cs2.SendInput("echo still\n", ""), "SendInput")
				if m := recvCtx(t, cs2); m.Data != "still\n" {
					t.Fatalf("after the deadline: %+v", m)
				}
			})
			t.Run("ST-04 unknown sandbox or context", func(t *testing.T) {
				if _, err := c.ConnectWSContext(ctx, "sb-nope", "ctx-nope"); !errors.Is(err, sandbox0.ErrNotFound) {
					t.Fatalf("unknown sandbox: %v", err)
				}
				if _, _, _, err := c.WatchFiles(ctx, "sb-nope", "/workspace", false); !errors.Is(err, sandbox0.ErrNotFound) {
					t.Fatalf("unknown sandbox watch: %v", err)
				}
				sb := claim(t, c)
				if _, err := sb.ConnectWSContext(ctx, "ctx-nope"); !errors.Is(err, sandbox0.ErrNotFound) {
					t.Fatalf("unknown context: %v", err)
				}
			})
		})
	}
}

// No goroutine outlives a watch, whichever way it ends (its function, its
// context, the client's Close), and the client's Close ends open streams.
func TestStreamsNoGoroutineLeak(t *testing.T) {
	lb, c := openLocal(t, &sandbox0.LocalOptions{})
	sb := claim(t, c)
	ctx := context.Background()
	watch := func(ctx context.Context, cl *sandbox0.Client) (<-chan sandbox0.FileWatchResponse, <-chan error, func() error) {
		ev, errs, stop, err := cl.WatchFiles(ctx, sb.ID, "/workspace", true)
		must(t, err, "WatchFiles")
		if m := <-ev; m.Type != "subscribed" {
			t.Fatalf("first message: %+v", m)
		}
		return ev, errs, stop
	}
	drain := func(ev <-chan sandbox0.FileWatchResponse, errs <-chan error) error {
		for range ev {
		}
		return <-errs
	}
	ev, errs, stop := watch(ctx, c) // warm up lanes and threads
	must(t, stop(), "stop")
	must(t, drain(ev, errs), "drain")
	before := runtime.NumGoroutine()
	for i := 0; i < 20; i++ {
		cctx, cancel := context.WithCancel(ctx)
		ev, errs, stop := watch(cctx, c)
		if i%2 == 0 {
			must(t, stop(), "stop")
			must(t, drain(ev, errs), "drain after stop")
		} else {
			cancel()
			if err := drain(ev, errs); !errors.Is(err, context.Canceled) {
				t.Fatalf("drain after cancel: %v", err)
			}
		}
		cancel()
	}
	c2, err := lb.Client()
	must(t, err, "Client")
	ev, errs, _ = watch(ctx, c2)
	cs, err := c2.ConnectWSContext(ctx, sb.ID, mustContext(t, c2, sb.ID))
	must(t, err, "ConnectWSContext")
	must(t, c2.Close(), "client Close")
	if err := drain(ev, errs); err != nil {
		t.Fatalf("watch after the client's Close: %v", err)
	}
	if _, err := cs.Recv(ctx); !errors.Is(err, sandbox0.ErrStreamClosed) {
		t.Fatalf("Recv after the client's Close: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before, %d after", before, runtime.NumGoroutine())
		}
		time.Sleep(time.Millisecond) // poll: the goroutines are returning
	}
}

func mustContext(t *testing.T, c *sandbox0.Client, sandboxID string) string {
	t.Helper()
	cr, err := c.CreateContext(context.Background(), sandboxID, sandbox0.CreateContextRequest{Type: "repl"})
	must(t, err, "CreateContext")
	return cr.ID
}
