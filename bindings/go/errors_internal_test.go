package sandbox0

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// The generated sentinels and tables equal the ones compiled into the C
// library (errors_table.go cannot drift from error.h).
func TestErrorTableMatchesC(t *testing.T) {
	for code, k := range errorKinds {
		if got := capi.S0_code_name(code); got != k.Name {
			t.Errorf("code %d: C name %q, Go %q", code, got, k.Name)
		}
		if got := capi.S0_strerror(code); got != k.Description {
			t.Errorf("code %d: C description %q, Go %q", code, got, k.Description)
		}
	}
	for _, row := range wireErrorTable {
		if got := capi.S0go_map_wire_code(row.wireCode, row.httpStatus, ""); got != row.code {
			t.Errorf("wire %s/%d: C code %d, table %d", row.wireCode, row.httpStatus, got, row.code)
		}
	}
	for _, row := range wireReasonTable {
		if got := capi.S0go_map_wire_reason(row.wireCode, 503, "x "+row.message+" y"); got != row.reason && row.wireCode == "unavailable" {
			t.Errorf("reason of %q: C %q, table %q", row.message, got, row.reason)
		}
	}
}

// CL-11: every wire error code maps to one kind, keeping the raw code and
// message; status, request id, details and Retry-After are carried;
// non-envelope bodies map to unexpected_response / unknown_error.
func TestCL11WireErrorTable(t *testing.T) {
	type answer struct {
		status int
		body   string
	}
	var mu sync.Mutex
	var cur answer
	set := func(a answer) { mu.Lock(); cur = a; mu.Unlock() }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur := cur
		mu.Unlock()
		w.Header().Set("X-Request-Id", "req-42")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(cur.status)
		fmt.Fprint(w, cur.body)
	}))
	defer srv.Close()
	c, err := NewClient(WithBaseURL(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, row := range wireErrorTable {
		msg := "message of " + row.wireCode
		for _, r := range wireReasonTable {
			if r.wireCode == row.wireCode && r.reason == row.reason {
				msg = r.message
			}
		}
		set(answer{row.httpStatus, fmt.Sprintf(`{"success":false,"error":{"code":%q,"message":%q,"details":{"n":1}}}`, row.wireCode, msg)})
		_, err := c.GetSandbox(ctx, "sb1")
		var api *APIError
		if !errors.As(err, &api) {
			t.Fatalf("%s/%d: want *APIError, got %T %v", row.wireCode, row.httpStatus, err, err)
		}
		if api.StatusCode != row.httpStatus || api.Code != row.wireCode || api.Message != msg ||
			api.Kind.Code != row.code || api.RequestID != "req-42" || api.RetryAfterSeconds != 7 ||
			fmt.Sprint(api.Details) != "map[n:1]" || !strings.Contains(string(api.Body), row.wireCode) {
			t.Errorf("%s/%d: %+v", row.wireCode, row.httpStatus, api)
		}
		if !errors.Is(err, errorKinds[row.code]) {
			t.Errorf("%s/%d: not errors.Is its kind %s", row.wireCode, row.httpStatus, errorKinds[row.code].Name)
		}
		if want := fmt.Sprintf("sandbox0 API error (%d): %s - %s", row.httpStatus, row.wireCode, msg); api.Error() != want {
			t.Errorf("text %q, want %q", api.Error(), want)
		}
	}
	for _, tc := range []struct {
		status   int
		body     string
		wantCode string
	}{
		{429, `{"error":"rate limit exceeded","retry_after":3}`, "unexpected_response"},
		{502, `<html>bad gateway</html>`, "unexpected_response"},
		{500, ``, "unknown_error"},
	} {
		set(answer{tc.status, tc.body})
		_, err := c.GetSandbox(ctx, "sb1")
		var api *APIError
		if !errors.As(err, &api) || api.Code != tc.wantCode || api.StatusCode != tc.status {
			t.Errorf("body %q: %T %+v", tc.body, err, err)
		}
	}
}
