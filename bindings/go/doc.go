// Package sandbox0 is the Go package of libsandbox0: a Sandbox0 client with
// the official Go SDK's names over the libsandbox0 C library (through a
// SWIG-generated cgo layer), plus the embedded local backend.
//
//	client, err := sandbox0.NewClientFromEnv() // SANDBOX0_BASE_URL, SANDBOX0_TOKEN
//	defer client.Close()
//	sandbox, err := client.ClaimSandbox(ctx, "default")
//	options := &sandbox0.SandboxLifecycleWaitOptions{Memory: true, Timeout: 6 * time.Minute}
//	if _, err := client.PauseSandboxAndWait(ctx, sandbox.ID, options); err != nil { … }
//	if _, err := client.ResumeSandboxAndWait(ctx, sandbox.ID, options); err != nil { … }
//
// Errors are *APIError, *SandboxWaitTimeoutError, *SandboxLifecycleFailedError
// (errors.As) or *Error (raised locally); each matches the sentinel of its
// kind (errors.Is(err, ErrNotFound)…). Every call takes a context: cancelling
// it returns ctx.Err() promptly. Clients and local backends are safe for
// concurrent use; Close them when done. OpenLocal gives an in-process
// backend with faults, a manual clock and inspection for offline tests. The
// facade subpackage is a UCloud/E2B-style API. See README.md for building
// (cgo uses pkg-config sandbox0).
package sandbox0
