package sandbox0_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Tests of docs/behaviours.md's CL- rows through the Go API, as docs/decisions.md
// settles them (see README.md "Deviations").

// scriptedFake answers every POST with post and the nth other request with
// gets[n] (the last one from then on).
func scriptedFake(t *testing.T, post reply, gets ...reply) *fakeServer {
	return newFake(t, func(r *http.Request, _ []byte, n int) reply {
		if r.Method == "POST" {
			return post
		}
		return gets[min(n, len(gets)-1)]
	})
}

// postsTo is the requests among reqs whose path ends in suffix.
func postsTo(reqs []recorded, suffix string) []recorded {
	var out []recorded
	for _, q := range reqs {
		if strings.HasSuffix(q.Path, suffix) {
			out = append(out, q)
		}
	}
	return out
}

// CL-01: one pause request, then GETs until paused; against s0 serve
// (200) through a recording proxy.
func TestCL01PauseAndWaitOnePOSTServe(t *testing.T) {
	srv := startServer(t)
	p := newProxy(t, srv.URL, nil)
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(p.URL), sandbox0.WithToken(srv.Token))
	must(t, err, "NewClient")
	defer c.Close()
	sb := claim(t, c)
	got, err := c.PauseSandboxAndWait(context.Background(), sb.ID, nil)
	must(t, err, "PauseSandboxAndWait")
	if got.Status != sandbox0.SandboxStatusPaused || !got.Paused {
		t.Fatalf("returned %s paused=%v", got.Status, got.Paused)
	}
	posts := p.list("POST")
	if len(posts) != 2 || !strings.HasSuffix(posts[1].Path, "/pause") { // claim + one pause
		t.Fatalf("POSTs: %+v", posts)
	}
	if posts[1].Body != "" {
		t.Fatalf("nil options sent a body: %q", posts[1].Body)
	}
	if gets := p.list("GET"); len(gets) == 0 || gets[len(gets)-1].At.Before(posts[1].At) {
		t.Fatal("no GET after the pause")
	}
}

// CL-01, CL-02: 202 is acceptance like 200; paused:false in the reply,
// status paused with paused false, and paused true with another status
// never end the wait; only both do.
func TestCL01CL02PauseCompletionNeedsBoth(t *testing.T) {
	f := scriptedFake(t, ok(202, map[string]any{"sandbox_id": "sb1", "status": "running", "paused": false}),
		ok(200, sbJSON("sb1", "running", false, 1)),
		ok(200, sbJSON("sb1", "paused", false, 1)),
		ok(200, sbJSON("sb1", "running", true, 1)),
		ok(200, sbJSON("sb1", "paused", true, 1)),
	)
	c := clientOf(t, f.URL)
	got, err := c.PauseSandboxAndWait(context.Background(), "sb1", &sandbox0.SandboxLifecycleWaitOptions{PollInterval: time.Millisecond})
	must(t, err, "PauseSandboxAndWait")
	if !got.Paused || got.Status != sandbox0.SandboxStatusPaused {
		t.Fatalf("got %+v", got)
	}
	if n := len(f.list("POST")); n != 1 {
		t.Fatalf("%d POSTs", n)
	}
	if n := len(f.list("GET")); n != 4 {
		t.Fatalf("%d GETs, want 4", n)
	}
}

// CL-02: without memory, failed is not a stop condition: the wait runs on
// to its deadline and ends with the wait-timeout error.
func TestCL02FilesystemFailedIsNotAStop(t *testing.T) {
	f := scriptedFake(t, ok(200, map[string]any{"sandbox_id": "sb1", "status": "running", "paused": false}),
		ok(200, sbJSON("sb1", "failed", true, 1)))
	c := clientOf(t, f.URL)
	_, err := c.PauseSandboxAndWait(context.Background(), "sb1", &sandbox0.SandboxLifecycleWaitOptions{Timeout: 300 * time.Millisecond, PollInterval: 20 * time.Millisecond})
	var te *sandbox0.SandboxWaitTimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("want *SandboxWaitTimeoutError, got %T %v", err, err)
	}
	if te.LastSandbox == nil || te.LastSandbox.Status != sandbox0.SandboxStatusFailed || te.Timeout != 300*time.Millisecond {
		t.Fatalf("timeout error %+v", te)
	}
	if len(f.list("GET")) < 2 {
		t.Fatal("the wait stopped polling at failed")
	}
}

// CL-03: memory mode: an observed failed ends the pause wait with the
// lifecycle-failed error; one POST, never a filesystem pause instead.
func TestCL03MemoryPauseFailed(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	must(t, lb.ArmFault("capture@after-authorize", sandbox0.FaultFail, 1, 0), "ArmFault")
	_, err := c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true, Timeout: 6 * time.Minute})
	var lf *sandbox0.SandboxLifecycleFailedError
	if !errors.As(err, &lf) {
		t.Fatalf("want *SandboxLifecycleFailedError, got %T %v", err, err)
	}
	if lf.SandboxID != sb.ID || lf.Action != "memory pause" || lf.LastSandbox == nil || lf.LastSandbox.Status != sandbox0.SandboxStatusFailed {
		t.Fatalf("error fields %+v", lf)
	}
	if !errors.Is(err, sandbox0.ErrLifecycleFailed) {
		t.Fatal("not ErrLifecycleFailed")
	}
	must(t, lb.ReleaseFault("capture@after-authorize"), "release")
	must(t, lb.Quiesce(10*time.Second), "quiesce")
	got, err := c.GetSandbox(ctx, sb.ID)
	must(t, err, "GetSandbox")
	if got.Status != sandbox0.SandboxStatusFailed || !got.Paused {
		t.Fatalf("after a failed capture: %s paused=%v", got.Status, got.Paused)
	}
	// The backend's operation records show a single memory pause.
	insp, err := lb.Inspect(sb.ID)
	must(t, err, "Inspect")
	if strings.Count(toJSON(t, insp["operations"]), `"pause"`) > 1 {
		t.Fatalf("more than one pause recorded: %s", toJSON(t, insp["operations"]))
	}
}

// CL-03 over HTTP: one POST carrying memory true (recording proxy in
// front of a server whose capture fails, through the admin fault endpoint).
func TestCL03MemoryPauseFailedOnePOSTServe(t *testing.T) {
	srv := startServer(t, "--enable-admin")
	p := newProxy(t, srv.URL, nil)
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(p.URL), sandbox0.WithToken(srv.Token))
	must(t, err, "NewClient")
	defer c.Close()
	sb := claim(t, c)
	srv.admin(t, "/admin/v1/faults", `{"name":"capture@after-authorize","mode":"fail","count":1}`)
	_, err = c.PauseSandboxAndWait(context.Background(), sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true})
	var lf *sandbox0.SandboxLifecycleFailedError
	if !errors.As(err, &lf) || lf.Action != "memory pause" {
		t.Fatalf("want memory pause failure, got %T %v", err, err)
	}
	pauses := postsTo(p.list("POST"), "/pause")
	if len(pauses) != 1 || pauses[0].Body != `{"memory":true}` {
		t.Fatalf("pause requests: %+v", pauses)
	}
}

// CL-04: resume reads first, sends one resume, targets generation+1; a
// stale running at the old generation, resumed:false and starting keep it
// polling with no further POST.
func TestCL04ResumeTargetsNextGeneration(t *testing.T) {
	f := scriptedFake(t, ok(200, map[string]any{"sandbox_id": "sb1", "status": "starting", "resumed": false}),
		ok(200, sbJSON("sb1", "paused", true, 3)),
		ok(200, sbJSON("sb1", "running", false, 3)), // stale
		ok(200, sbJSON("sb1", "starting", false, 4)),
		ok(200, sbJSON("sb1", "running", false, 4)),
	)
	c := clientOf(t, f.URL)
	got, err := c.ResumeSandboxAndWait(context.Background(), "sb1", &sandbox0.SandboxLifecycleWaitOptions{PollInterval: time.Millisecond})
	must(t, err, "ResumeSandboxAndWait")
	if got.RuntimeGeneration != 4 || got.Status != sandbox0.SandboxStatusRunning {
		t.Fatalf("got %+v", got)
	}
	if n := len(f.list("POST")); n != 1 {
		t.Fatalf("%d POSTs", n)
	}
	gets, posts := f.list("GET"), f.list("POST")
	if !gets[0].At.Before(posts[0].At) || len(gets) != 4 {
		t.Fatalf("want a GET before the POST and 4 GETs, got %d", len(gets))
	}
}

// CL-04 on the real backend: resume of a paused sandbox ends running at
// generation+1 with one POST.
func TestCL04ResumeServe(t *testing.T) {
	srv := startServer(t)
	p := newProxy(t, srv.URL, nil)
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(p.URL), sandbox0.WithToken(srv.Token))
	must(t, err, "NewClient")
	defer c.Close()
	ctx := context.Background()
	sb := claim(t, c)
	paused, err := c.PauseSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "pause")
	got, err := c.ResumeSandboxAndWait(ctx, sb.ID, nil)
	must(t, err, "resume")
	if got.Status != sandbox0.SandboxStatusRunning || got.Paused || got.RuntimeGeneration != paused.RuntimeGeneration+1 {
		t.Fatalf("resumed %+v (paused at generation %d)", got, paused.RuntimeGeneration)
	}
	if n := len(postsTo(p.list("POST"), "/resume")); n != 1 {
		t.Fatalf("%d resume POSTs", n)
	}
}

// CL-05: memory resume: failed at an older generation is ignored, failed
// at the target generation is the lifecycle-failed error.
func TestCL05MemoryResumeFailed(t *testing.T) {
	f := scriptedFake(t, ok(200, map[string]any{"sandbox_id": "sb1", "status": "starting", "resumed": false}),
		ok(200, sbJSON("sb1", "paused", true, 3)),
		ok(200, sbJSON("sb1", "failed", true, 3)), // stale
		ok(200, sbJSON("sb1", "failed", false, 4)),
	)
	c := clientOf(t, f.URL)
	_, err := c.ResumeSandboxAndWait(context.Background(), "sb1", &sandbox0.SandboxLifecycleWaitOptions{Memory: true, PollInterval: time.Millisecond})
	var lf *sandbox0.SandboxLifecycleFailedError
	if !errors.As(err, &lf) || lf.Action != "memory resume" || lf.LastSandbox.RuntimeGeneration != 4 {
		t.Fatalf("want memory resume failure at generation 4, got %T %v", err, err)
	}
	if n := len(f.list("GET")); n != 3 {
		t.Fatalf("%d GETs, want 3", n)
	}
}

// CL-06: negative Timeout or PollInterval is refused before any request.
func TestCL06NegativeOptionsNoRequest(t *testing.T) {
	f := newFake(t, func(*http.Request, []byte, int) reply { return ok(200, nil) })
	c := clientOf(t, f.URL)
	ctx := context.Background()
	for _, o := range []*sandbox0.SandboxLifecycleWaitOptions{{Timeout: -1}, {PollInterval: -time.Second}} {
		_, err := c.PauseSandboxAndWait(ctx, "sb1", o)
		if !errors.Is(err, sandbox0.ErrInvalidArgument) {
			t.Fatalf("%+v: want ErrInvalidArgument, got %v", o, err)
		}
		_, err = c.WaitForSandboxLifecycle(ctx, "sb1", func(*sandbox0.Sandbox) bool { return true }, o)
		if !errors.Is(err, sandbox0.ErrInvalidArgument) {
			t.Fatalf("wait %+v: want ErrInvalidArgument, got %v", o, err)
		}
	}
	if _, err := c.WaitForSandboxLifecycle(ctx, "sb1", nil, nil); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("nil predicate: %v", err)
	}
	if n := len(f.list("")); n != 0 {
		t.Fatalf("%d requests sent", n)
	}
}

// CL-06: default budgets (60 s filesystem, 360 s memory) on the backend's
// virtual clock; the error carries id, budget and last sandbox; the
// server's operation goes on and completes once the fault is released.
func TestCL06DefaultBudgets(t *testing.T) {
	lb, c := openLocal(t, nil)
	ctx := context.Background()
	sb := claim(t, c)
	must(t, lb.ArmFault("node_channel", sandbox0.FaultFail, 0, 0), "ArmFault")
	start := lb.Now()
	_, err := c.PauseSandboxAndWait(ctx, sb.ID, nil)
	var te *sandbox0.SandboxWaitTimeoutError
	if !errors.As(err, &te) || te.Timeout != 60*time.Second || te.SandboxID != sb.ID || te.LastSandbox == nil || te.LastSandbox.Paused {
		t.Fatalf("filesystem wait: %T %+v", err, err)
	}
	if el := lb.Now().Sub(start); el < 60*time.Second || el > 61*time.Second {
		t.Fatalf("virtual time spent %s, want 60 s", el)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("a Timeout (not a ctx deadline) matched context.DeadlineExceeded")
	}
	_, err = c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true})
	if !errors.As(err, &te) || te.Timeout != 360*time.Second {
		// A memory pause of a sandbox with a pending filesystem pause may be
		// refused as a conflict; the budget rule is what is checked here.
		var api *sandbox0.APIError
		if !errors.As(err, &api) {
			t.Fatalf("memory wait: %T %v", err, err)
		}
	}
	_, err = c.WaitForSandboxLifecycle(ctx, sb.ID, func(s *sandbox0.Sandbox) bool { return s.Paused }, nil)
	if !errors.As(err, &te) || te.Timeout != 60*time.Second {
		t.Fatalf("generic wait: %T %v", err, err)
	}
	must(t, lb.ReleaseFault("node_channel"), "release")
	got, err := c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: 10 * time.Minute})
	must(t, err, "pause completes after the fault")
	if !got.Paused {
		t.Fatal("not paused")
	}
}

// CL-06 (docs/decisions.md schedule): the first poll is immediate and
// PollInterval caps every sleep.
func TestCL06PollIntervalCapsSleeps(t *testing.T) {
	f := newFake(t, func(r *http.Request, _ []byte, n int) reply {
		if r.Method == "POST" {
			return ok(200, map[string]any{"sandbox_id": "sb1", "status": "running", "paused": false})
		}
		return ok(200, sbJSON("sb1", "running", false, 1))
	})
	c := clientOf(t, f.URL)
	_, err := c.PauseSandboxAndWait(context.Background(), "sb1", &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Second, PollInterval: 50 * time.Millisecond})
	if !errors.Is(err, sandbox0.ErrTimeout) {
		t.Fatalf("want a timeout, got %v", err)
	}
	gets, posts := f.list("GET"), f.list("POST")
	if gap := gets[0].At.Sub(posts[0].At); gap > 40*time.Millisecond {
		t.Fatalf("first poll %s after the POST", gap)
	}
	// Sleeps of at most 50 ms over 1 s: at least ~10 polls unless the
	// machine stalls; at most 1000/40 + 2 (jitter shortens sleeps by ≤ 20%).
	if len(gets) < 3 || len(gets) > 27 {
		t.Fatalf("%d GETs in 1 s with a 50 ms cap", len(gets))
	}
	for i := 1; i < len(gets); i++ {
		if d := gets[i].At.Sub(gets[i-1].At); d > 400*time.Millisecond { // 50 ms cap plus scheduling slack
			t.Fatalf("gap %s between polls (cap 50 ms)", d)
		}
	}
}

// CL-07: cancelling the context mid-wait returns context.Canceled within
// 100 ms (never a timeout error); the server's pause goes on.
func TestCL07CancelMidWait(t *testing.T) {
	srv := startServer(t, "--enable-admin")
	c := srv.client(t)
	sb := claim(t, c)
	srv.admin(t, "/admin/v1/faults", `{"name":"node_channel","mode":"fail","count":0}`)
	ctx, cancel := context.WithCancel(context.Background())
	var cancelled time.Time
	timer := time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
	defer timer.Stop()
	_, err := c.PauseSandboxAndWait(ctx, sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
	returned := time.Now()
	if err != context.Canceled {
		t.Fatalf("want bare context.Canceled, got %T %v", err, err)
	}
	if d := returned.Sub(cancelled); d > 100*time.Millisecond {
		t.Fatalf("returned %s after cancel", d)
	}
	srv.release(t, "node_channel")
	got, err := c.WaitForSandboxLifecycle(context.Background(), sb.ID, func(s *sandbox0.Sandbox) bool { return s.Paused }, &sandbox0.SandboxLifecycleWaitOptions{Timeout: time.Minute})
	must(t, err, "the pause goes on")
	if !got.Paused {
		t.Fatal("not paused")
	}
}

// CL-08: the reply of a memory pause is lost in transport: the helper
// inspects and repeats the same request, always with memory true, and ends
// paused with one durable pause.
func TestCL08LostReplyRepeatsSameBody(t *testing.T) {
	srv := startServer(t)
	var dropped atomic.Bool
	p := newProxy(t, srv.URL, func(r *http.Request, _ []byte, _ int) bool {
		return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/pause") && dropped.CompareAndSwap(false, true)
	})
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(p.URL), sandbox0.WithToken(srv.Token))
	must(t, err, "NewClient")
	defer c.Close()
	sb := claim(t, c)
	got, err := c.PauseSandboxAndWait(context.Background(), sb.ID, &sandbox0.SandboxLifecycleWaitOptions{Memory: true, Timeout: time.Minute})
	must(t, err, "PauseSandboxAndWait")
	if !got.Paused || !dropped.Load() {
		t.Fatalf("paused=%v dropped=%v", got.Paused, dropped.Load())
	}
	for _, q := range postsTo(p.list("POST"), "/pause") {
		if q.Body != `{"memory":true}` {
			t.Fatalf("a pause carried %q", q.Body)
		}
	}
}

// CL-09: plain calls send no body; the option variants and the wait
// helpers with options send exactly {"memory": <bool>}, false included.
func TestCL09RequestBodies(t *testing.T) {
	f := newFake(t, func(r *http.Request, _ []byte, n int) reply {
		if r.Method == "POST" {
			return ok(200, map[string]any{"sandbox_id": "sb1", "status": "paused", "paused": true, "resumed": true})
		}
		if strings.Contains(r.URL.Path, "sb-paused") || n%2 == 1 {
			return ok(200, sbJSON("sb1", "paused", true, 1))
		}
		return ok(200, sbJSON("sb1", "running", false, 2))
	})
	c := clientOf(t, f.URL)
	ctx := context.Background()
	_, err := c.PauseSandbox(ctx, "sb1")
	must(t, err, "PauseSandbox")
	_, err = c.PauseSandboxWithOptions(ctx, "sb1", &sandbox0.SandboxExecutionStateOptions{Memory: false})
	must(t, err, "PauseSandboxWithOptions false")
	_, err = c.PauseSandboxWithOptions(ctx, "sb1", &sandbox0.SandboxExecutionStateOptions{Memory: true})
	must(t, err, "PauseSandboxWithOptions true")
	_, err = c.ResumeSandbox(ctx, "sb1")
	must(t, err, "ResumeSandbox")
	_, err = c.ResumeSandboxWithOptions(ctx, "sb1", &sandbox0.SandboxExecutionStateOptions{Memory: true})
	must(t, err, "ResumeSandboxWithOptions")
	_, err = c.PauseSandboxAndWait(ctx, "sb-paused", &sandbox0.SandboxLifecycleWaitOptions{Memory: false})
	must(t, err, "PauseSandboxAndWait memory false")
	want := []string{"", `{"memory":false}`, `{"memory":true}`, "", `{"memory":true}`, `{"memory":false}`}
	posts := f.list("POST")
	if len(posts) != len(want) {
		t.Fatalf("%d POSTs", len(posts))
	}
	for i, q := range posts {
		if q.Body != want[i] {
			t.Fatalf("POST %d %s body %q, want %q", i, q.Path, q.Body, want[i])
		}
	}
}

// CL-10 as docs/decisions.md settles it: lifecycle calls hand 429 and 503 to
// the caller (no automatic retry); Retry-After is exposed in whole seconds
// and in ms, read from seconds and from an HTTP date; the claim-throttled
// predicate is true only for 429 claim_start_throttled; a polling GET rides
// out 503 "sandbox is waking up".
func TestCL10NoRetriesAndRetryAfter(t *testing.T) {
	date := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	f := newFake(t, func(r *http.Request, _ []byte, n int) reply {
		switch {
		case strings.HasSuffix(r.URL.Path, "/pause"):
			rep := fail(429, "claim_start_throttled", "slow down")
			rep.Header = map[string]string{"Retry-After": "2"}
			return rep
		case strings.HasSuffix(r.URL.Path, "/resume"):
			rep := fail(503, "unavailable", "no capacity")
			rep.Header = map[string]string{"Retry-After": date}
			return rep
		case r.Method == "POST":
			return fail(429, "quota_exceeded", "quota")
		}
		if strings.Contains(r.URL.Path, "waking") && n < 2 {
			return fail(503, "unavailable", "sandbox is waking up")
		}
		return ok(200, sbJSON("waking", "running", false, 2))
	})
	c := clientOf(t, f.URL)
	ctx := context.Background()
	_, err := c.PauseSandbox(ctx, "sb1")
	api := asAPI(t, err)
	if api.StatusCode != 429 || api.RetryAfterSeconds != 2 || api.RetryAfterMs != 2000 || !api.IsClaimStartThrottled() || !sandbox0.IsClaimStartThrottled(err) {
		t.Fatalf("429: %+v", api)
	}
	_, err = c.ResumeSandbox(ctx, "sb1")
	api = asAPI(t, err)
	if api.StatusCode != 503 || api.RetryAfterMs <= 0 || api.RetryAfterMs > 3000 || api.IsClaimStartThrottled() || !errors.Is(err, sandbox0.ErrUnavailable) || !api.Retryable {
		t.Fatalf("503 with an HTTP date: %+v", api)
	}
	_, err = c.ClaimSandbox(ctx, "default")
	if api = asAPI(t, err); api.IsClaimStartThrottled() || api.RetryAfterMs != -1 || api.RetryAfterSeconds != 0 {
		t.Fatalf("quota 429: %+v", api)
	}
	if n := len(f.list("POST")); n != 3 {
		t.Fatalf("%d POSTs: a lifecycle call was retried", n)
	}
	got, err := c.WaitForSandboxLifecycle(ctx, "waking", func(s *sandbox0.Sandbox) bool { return s.Status == sandbox0.SandboxStatusRunning }, &sandbox0.SandboxLifecycleWaitOptions{PollInterval: time.Millisecond})
	must(t, err, "wait through waking up")
	if got.ID != "waking" {
		t.Fatalf("got %+v", got)
	}
}

// CL-12: status and paused are independent; null, absent and zero-time
// expiries are unset; "" runtime_id is no runtime; unknown fields ignored.
func TestCL12ParsingTolerance(t *testing.T) {
	bodies := map[string]string{
		"sb-null":   `{"success":true,"data":{"id":"sb-null","status":"failed","paused":true,"runtime_id":"","expires_at":null,"hard_expires_at":"0001-01-01T00:00:00Z","extra":{"x":1}}}`,
		"sb-absent": `{"success":true,"data":{"id":"sb-absent","status":"running","paused":false,"runtime_id":"rt1","expires_at":"2030-01-02T03:04:05Z","new_field":[1,2]}}`,
	}
	f := newFake(t, func(r *http.Request, _ []byte, _ int) reply {
		return reply{Status: 200, Body: bodies[r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]]}
	})
	c := clientOf(t, f.URL)
	a, err := c.GetSandbox(context.Background(), "sb-null")
	must(t, err, "get")
	if a.Status != sandbox0.SandboxStatusFailed || !a.Paused || a.RuntimeID != "" || !a.ExpiresAt.IsZero() || !a.HardExpiresAt.IsZero() {
		t.Fatalf("sb-null %+v", a)
	}
	b, err := c.GetSandbox(context.Background(), "sb-absent")
	must(t, err, "get")
	if b.Status != sandbox0.SandboxStatusRunning || b.Paused || b.RuntimeID != "rt1" || !b.HardExpiresAt.IsZero() || b.ExpiresAt.Year() != 2030 || !strings.Contains(string(b.Raw), "new_field") {
		t.Fatalf("sb-absent %+v", b)
	}
}

// CL-13: a memory fork needs a non-blank idempotency key of at most 255
// characters, checked before any request; it is sent as Idempotency-Key; a
// 503 while capture is pending reaches the caller.
func TestCL13MemoryForkKey(t *testing.T) {
	f := newFake(t, func(r *http.Request, _ []byte, n int) reply {
		if n == 0 {
			return fail(503, "unavailable", "memory fork capture is pending")
		}
		return ok(201, map[string]any{"source_sandbox_id": "sb1", "sandbox": sbJSON("child", "paused", true, 1)})
	})
	c := clientOf(t, f.URL)
	ctx := context.Background()
	mem := &sandbox0.ForkSandboxRequest{Memory: true}
	for _, o := range []*sandbox0.ForkSandboxOptions{nil, {IdempotencyKey: ""}, {IdempotencyKey: "   "}, {IdempotencyKey: strings.Repeat("k", 256)}} {
		if _, err := c.ForkSandboxWithOptions(ctx, "sb1", mem, o); !errors.Is(err, sandbox0.ErrInvalidArgument) {
			t.Fatalf("key %+v: want ErrInvalidArgument, got %v", o, err)
		}
	}
	if _, err := c.ForkSandbox(ctx, "sb1", mem); !errors.Is(err, sandbox0.ErrInvalidArgument) {
		t.Fatalf("ForkSandbox memory without key: %v", err)
	}
	if n := len(f.list("")); n != 0 {
		t.Fatalf("%d requests sent for invalid keys", n)
	}
	key := strings.Repeat("k", 255)
	_, err := c.ForkSandboxWithOptions(ctx, "sb1", mem, &sandbox0.ForkSandboxOptions{IdempotencyKey: key})
	if api := asAPI(t, err); api.StatusCode != 503 || api.Reason != "capture_pending" {
		t.Fatalf("pending capture: %+v", api)
	}
	child, err := c.ForkSandboxWithOptions(ctx, "sb1", mem, &sandbox0.ForkSandboxOptions{IdempotencyKey: key})
	must(t, err, "repeat with the same key")
	if child.ID != "child" {
		t.Fatalf("child %+v", child)
	}
	for _, q := range f.list("POST") {
		if q.Header.Get("Idempotency-Key") != key {
			t.Fatalf("Idempotency-Key %q", q.Header.Get("Idempotency-Key"))
		}
	}
}
