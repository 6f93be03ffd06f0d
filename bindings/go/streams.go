package sandbox0

import (
	"context"
	"encoding/json"
	"sync"
)

// Streams (docs/wire.md §8.2) over the C library's stream API, on either
// transport: a WebSocket to the server for an HTTP client, the in-process
// stream for a Local client. Messages arrive in the order the server sent
// them. A stream ends when the server ends it — CloseCode 1000 the process
// exited, 1001 the sandbox paused or was deleted (open a new one after a
// resume) — or on Close, which only detaches (the process goes on). The
// client's Close closes its open streams. Opening is a runtime request: a
// paused sandbox with auto-resume is woken first.

// Stream kinds of sandbox0/streams.h.
const (
	streamContext    = 1
	streamSession    = 2
	streamFilesWatch = 3
)

// ContextMessage is one server message of a context stream: Type "output"
// (Source "stdout", "stderr" or "pty"; Data), "done" after an input that
// carried a RequestID, or the terminal "done" with ExitCode and State.
type ContextMessage struct {
	Type      string          `json:"type"`
	Source    string          `json:"source,omitempty"`
	Data      string          `json:"data,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	ExitCode  *int            `json:"exit_code,omitempty"`
	State     string          `json:"state,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// ContextStream is a context's output and input (the official SDK's
// ConnectWSContext, without a raw socket). Recv, the Send methods and
// Close may be called from different goroutines.
type ContextStream struct {
	s *stream
	// ContextID and SandboxID name the context.
	ContextID, SandboxID string
}

// ConnectWSContext opens a context's stream (GET …/contexts/{id}/ws).
// ErrNotFound: sandbox_not_found, context_not_found.
func (c *Client) ConnectWSContext(ctx context.Context, sandboxID, contextID string) (*ContextStream, error) {
	if contextID == "" {
		return nil, invalid("context id is required")
	}
	s, err := c.openStream(ctx, streamContext, sandboxID, contextID, 0)
	if err != nil {
		return nil, err
	}
	return &ContextStream{s: s, ContextID: contextID, SandboxID: sandboxID}, nil
}

// Recv returns the next message. At the end of the stream it returns
// (nil, nil): CloseCode says why. A context that ends returns ctx.Err()
// (the stream goes on); after Close it returns ErrStreamClosed.
func (cs *ContextStream) Recv(ctx context.Context) (*ContextMessage, error) {
	raw, ok, err := cs.s.recv(ctx)
	if !ok || err != nil {
		return nil, err
	}
	m := &ContextMessage{}
	if err := decodeInto(raw, m); err != nil {
		return nil, err
	}
	return m, nil
}

// SendInput writes data to the process's stdin; a non-empty requestID gets
// its own "done" after the output the input made. ErrGone (stream_closed)
// once the stream has ended.
func (cs *ContextStream) SendInput(data, requestID string) error {
	m := map[string]any{"type": "input", "data": data}
	if requestID != "" {
		m["request_id"] = requestID
	}
	return sendJSON(cs.s, m)
}

// SendSignal sends a signal by name ("INT", "TERM", "KILL"…).
func (cs *ContextStream) SendSignal(signal string) error {
	return sendJSON(cs.s, map[string]any{"type": "signal", "signal": signal})
}

// SendResize resizes the context's terminal.
func (cs *ContextStream) SendResize(rows, cols uint16) error {
	return sendJSON(cs.s, map[string]any{"type": "resize", "rows": rows, "cols": cols})
}

// CloseCode is the RFC 6455 close code and reason once the server ended
// the stream (0 and "" before).
func (cs *ContextStream) CloseCode() (int, string) { return cs.s.closeCode() }

// Close detaches (the process goes on); a Recv waiting in another goroutine
// returns ErrStreamClosed promptly. Idempotent.
func (cs *ContextStream) Close() error {
	cs.s.close()
	return nil
}

// SessionMessage is one server message of a session attach: Type "event"
// (Event is an ExecutionSessionEvent with its "seq"), or "ack" / "error"
// answering a request with RequestID.
type SessionMessage struct {
	Type      string          `json:"type"`
	Event     json.RawMessage `json:"event,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// Seq is the event's cursor (0 for messages that are not events).
func (m *SessionMessage) Seq() int64 {
	var e struct {
		Seq int64 `json:"seq"`
	}
	if m.Type != "event" || json.Unmarshal(m.Event, &e) != nil {
		return 0
	}
	return e.Seq
}

// SessionStream is an attach to a supervised session.
type SessionStream struct{ s *stream }

// AttachSession attaches to a session (GET …/sessions/{id}/ws?after=): its
// events with seq greater than after (0: from the start), then live ones.
// ErrNotFound session_not_found; ErrGone event_cursor_expired.
func (c *Client) AttachSession(ctx context.Context, sandboxID, sessionID string, after int64) (*SessionStream, error) {
	if sessionID == "" {
		return nil, invalid("session id is required")
	}
	if after < 0 {
		return nil, invalid("after must be >= 0 (a seq), got %d", after)
	}
	s, err := c.openStream(ctx, streamSession, sandboxID, sessionID, after)
	if err != nil {
		return nil, err
	}
	return &SessionStream{s: s}, nil
}

// Recv is ContextStream.Recv for session messages.
func (ss *SessionStream) Recv(ctx context.Context) (*SessionMessage, error) {
	raw, ok, err := ss.s.recv(ctx)
	if !ok || err != nil {
		return nil, err
	}
	m := &SessionMessage{}
	if err := decodeInto(raw, m); err != nil {
		return nil, err
	}
	return m, nil
}

// Send sends one client message (an input, signal or resize object of
// docs/wire.md §8.2), marshalled to JSON.
func (ss *SessionStream) Send(message any) error { return sendJSON(ss.s, message) }

// CloseCode is ContextStream.CloseCode.
func (ss *SessionStream) CloseCode() (int, string) { return ss.s.closeCode() }

// Close is ContextStream.Close.
func (ss *SessionStream) Close() error {
	ss.s.close()
	return nil
}

// FileWatchResponse is one message of a file watch: Type "subscribed" (with
// WatchID and Path), "unsubscribed", "event" (Event "create", "write",
// "remove", "rename", "chmod" or "invalidate"; Path) or "error".
type FileWatchResponse struct {
	Type    string `json:"type"`
	WatchID string `json:"watch_id,omitempty"`
	Event   string `json:"event,omitempty"`
	Path    string `json:"path,omitempty"`
	Error   string `json:"error,omitempty"`
}

// WatchFiles watches path (GET …/files/watch, one subscription), as the
// official SDK: messages arrive on the first channel (closed when the watch
// ends); the second carries at most one error (the stream failing, or
// ctx.Err()) and is closed with the first; the function closes the watch.
// The goroutine that feeds the channels exits when ctx ends, the function
// is called, the client closes or the server ends the stream (a pause:
// close code 1001). A receiver that stops reading must call the function or
// cancel ctx. ErrNotFound sandbox_not_found.
func (c *Client) WatchFiles(ctx context.Context, sandboxID, path string, recursive bool) (<-chan FileWatchResponse, <-chan error, func() error, error) {
	if path == "" {
		return nil, nil, nil, invalid("path is required")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s, err := c.openStream(ctx, streamFilesWatch, sandboxID, "", 0)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := sendJSON(s, map[string]any{"action": "subscribe", "path": path, "recursive": recursive}); err != nil {
		s.close()
		return nil, nil, nil, err
	}
	events := make(chan FileWatchResponse)
	errs := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	stop := func() error {
		once.Do(func() {
			s.close() // first: the feeding goroutine then ends without an error
			cancel()
		})
		return nil
	}
	go func() {
		defer close(errs)
		defer close(events)
		defer stop()
		for {
			raw, ok, err := s.recv(ctx)
			if err != nil {
				if err != ErrStreamClosed {
					errs <- err
				}
				return
			}
			if !ok {
				return
			}
			var m FileWatchResponse
			if err := decodeInto(raw, &m); err != nil {
				errs <- err
				return
			}
			select {
			case events <- m:
			case <-ctx.Done():
				if !s.closing.Load() {
					errs <- ctx.Err()
				}
				return
			}
		}
	}()
	return events, errs, stop, nil
}

// WatchFiles is Client.WatchFiles on this sandbox.
func (s *Sandbox) WatchFiles(ctx context.Context, path string, recursive bool) (<-chan FileWatchResponse, <-chan error, func() error, error) {
	return s.cl().WatchFiles(ctx, s.ID, path, recursive)
}

// ConnectWSContext is Client.ConnectWSContext on this sandbox.
func (s *Sandbox) ConnectWSContext(ctx context.Context, contextID string) (*ContextStream, error) {
	return s.cl().ConnectWSContext(ctx, s.ID, contextID)
}

// AttachSession is Client.AttachSession on this sandbox.
func (s *Sandbox) AttachSession(ctx context.Context, sessionID string, after int64) (*SessionStream, error) {
	return s.cl().AttachSession(ctx, s.ID, sessionID, after)
}

func sendJSON(s *stream, message any) error {
	b, err := json.Marshal(message)
	if err != nil {
		return invalid("stream message: %v", err)
	}
	return s.send(b)
}
