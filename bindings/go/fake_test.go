package sandbox0_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
	"time"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// recorded is one request a fake server or recording proxy saw.
type recorded struct {
	Method, Path string
	Body         string
	Header       http.Header
	At           time.Time
}

// reply is a scripted answer.
type reply struct {
	Status int
	Header map[string]string
	Body   string
}

// recorder keeps the requests of a test server.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) add(req *http.Request, body []byte) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, recorded{Method: req.Method, Path: req.URL.Path, Body: string(body),
		Header: req.Header.Clone(), At: time.Now()})
	return len(r.reqs)
}

// list returns the requests with the given method (all when "").
func (r *recorder) list(method string) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recorded
	for _, q := range r.reqs {
		if method == "" || q.Method == method {
			out = append(out, q)
		}
	}
	return out
}

// fakeServer answers each request with script(request, its body, how many
// requests of that method came before it).
type fakeServer struct {
	recorder
	URL string
}

func newFake(t testing.TB, script func(r *http.Request, body []byte, nth int) reply) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	counts := map[string]int{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.add(r, body)
		mu.Lock()
		n := counts[r.Method]
		counts[r.Method]++
		mu.Unlock()
		rep := script(r, body, n)
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// client makes a client of a fake server or proxy (closed at cleanup).
func clientOf(t testing.TB, url string) *sandbox0.Client {
	t.Helper()
	c, err := sandbox0.NewClient(sandbox0.WithBaseURL(url), sandbox0.WithToken("s0_test"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ok is a success envelope.
func ok(status int, data any) reply {
	b, _ := json.Marshal(map[string]any{"success": true, "data": data})
	return reply{Status: status, Body: string(b)}
}

// fail is an error envelope.
func fail(status int, code, message string) reply {
	b, _ := json.Marshal(map[string]any{"success": false, "error": map[string]any{"code": code, "message": message}})
	return reply{Status: status, Body: string(b)}
}

// sbJSON is a Sandbox object.
func sbJSON(id, status string, paused bool, gen int) map[string]any {
	return map[string]any{"id": id, "template_id": "default", "status": status, "paused": paused,
		"runtime_generation": gen, "runtime_id": map[bool]string{true: "", false: "rt-x"}[paused]}
}

// recordingProxy forwards to upstream and records every request; drop, when
// it returns true for a request, forwards it and then closes the
// connection without answering (the reply is lost in transport).
type recordingProxy struct {
	recorder
	URL string
}

func newProxy(t testing.TB, upstream string, drop func(r *http.Request, body []byte, nth int) bool) *recordingProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := p.add(r, body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if drop != nil && drop(r, body, n) {
			out := r.Clone(r.Context())
			out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = u.Scheme, u.Host, u.Host, ""
			out.Body = io.NopCloser(bytes.NewReader(body))
			if resp, err := http.DefaultTransport.RoundTrip(out); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}
