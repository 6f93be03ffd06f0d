package sandbox0

import (
	"encoding/json"
	"os"
	"time"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// SandboxStatus is a public lifecycle state, exactly the wire's
// SandboxLifecycleStatus. Paused is a separate boolean on Sandbox: a
// memory-pause recovery can read failed with Paused true.
type SandboxStatus string

// The five lifecycle states; "" when a response carried none.
const (
	SandboxStatusStarting    SandboxStatus = "starting"
	SandboxStatusRunning     SandboxStatus = "running"
	SandboxStatusPaused      SandboxStatus = "paused"
	SandboxStatusTerminating SandboxStatus = "terminating"
	SandboxStatusFailed      SandboxStatus = "failed"
)

var statusCodes = map[SandboxStatus]int{
	SandboxStatusStarting: 1, SandboxStatusRunning: 2, SandboxStatusPaused: 3,
	SandboxStatusTerminating: 4, SandboxStatusFailed: 5,
}

// Sandbox is a sandbox as one response described it (a copy: it holds no C
// memory). Times are zero when unset. A Sandbox returned by a Client also
// works as a handle: its file and context methods call that client.
type Sandbox struct {
	ID                string
	Template          string // template id
	TeamID            string
	Status            SandboxStatus
	Paused            bool // the durable paused state, independent of Status
	AutoResume        bool
	PodName           string
	RuntimeID         string // "" while paused
	RuntimeGeneration int64
	ExpiresAt         time.Time
	HardExpiresAt     time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	ClaimedAt         time.Time
	// Raw is the whole JSON object the response carried, including fields
	// this package does not model (services, resources…).
	Raw json.RawMessage

	client *Client
}

func unixMs(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func sandboxFromC(p capi.Struct_SS_s0_sandbox_info) *Sandbox {
	if p == nil || p.Swigcptr() == 0 {
		return nil
	}
	return &Sandbox{
		ID:                capi.S0_sandbox_info_id(p),
		Template:          capi.S0_sandbox_info_template_id(p),
		TeamID:            capi.S0_sandbox_info_team_id(p),
		Status:            statusName(capi.S0_sandbox_info_status(p)),
		Paused:            capi.S0_sandbox_info_paused(p),
		AutoResume:        capi.S0_sandbox_info_auto_resume(p),
		PodName:           capi.S0_sandbox_info_pod_name(p),
		RuntimeID:         capi.S0_sandbox_info_runtime_id(p),
		RuntimeGeneration: capi.S0_sandbox_info_runtime_generation(p),
		ExpiresAt:         unixMs(capi.S0_sandbox_info_expires_at_unix_ms(p)),
		HardExpiresAt:     unixMs(capi.S0_sandbox_info_hard_expires_at_unix_ms(p)),
		CreatedAt:         unixMs(capi.S0_sandbox_info_created_at_unix_ms(p)),
		UpdatedAt:         unixMs(capi.S0_sandbox_info_updated_at_unix_ms(p)),
		ClaimedAt:         unixMs(capi.S0_sandbox_info_claimed_at_unix_ms(p)),
		Raw:               json.RawMessage(capi.S0_sandbox_info_json(p)),
	}
}

// takeSandbox converts a sandbox the caller owns and frees it.
func takeSandbox(p capi.Struct_SS_s0_sandbox_info, c *Client) *Sandbox {
	defer capi.S0_sandbox_info_free(p)
	s := sandboxFromC(p)
	if s != nil {
		s.client = c
	}
	return s
}

func statusName(code int) SandboxStatus {
	if code == 0 {
		return ""
	}
	return SandboxStatus(capi.S0_status_name(code))
}

// LifecycleResult is the answer of a pause, resume or restore request.
type LifecycleResult struct {
	SandboxID  string
	Status     SandboxStatus
	Paused     bool   // pause: true only once committed
	Resumed    bool   // resume: false means accepted durable work that goes on
	SnapshotID string // restore: the snapshot restored
	HTTPStatus int    // 200, or 202 for a pause accepted while the node is unreachable
	Raw        json.RawMessage
}

// PauseSandboxResponse is the answer of PauseSandbox.
type PauseSandboxResponse = LifecycleResult

// ResumeSandboxResponse is the answer of ResumeSandbox.
type ResumeSandboxResponse = LifecycleResult

// RestoreSandboxRootFSResponse is the answer of RestoreSandboxRootFS.
type RestoreSandboxRootFSResponse = LifecycleResult

func takeLifecycle(p capi.Struct_SS_s0_lifecycle_result) *LifecycleResult {
	defer capi.S0_lifecycle_result_free(p)
	return &LifecycleResult{
		SandboxID:  capi.S0_lifecycle_result_sandbox_id(p),
		Status:     statusName(capi.S0_lifecycle_result_status(p)),
		Paused:     capi.S0_lifecycle_result_paused(p),
		Resumed:    capi.S0_lifecycle_result_resumed(p),
		SnapshotID: capi.S0_lifecycle_result_snapshot_id(p),
		HTTPStatus: capi.S0_lifecycle_result_http_status(p),
		Raw:        json.RawMessage(capi.S0_lifecycle_result_json(p)),
	}
}

// SandboxRootFSSnapshot is a named RootFS snapshot (filesystem state only).
type SandboxRootFSSnapshot struct {
	ID          string
	SandboxID   string // the source sandbox
	Name        string
	Description string
	CreatedAt   time.Time
	ExpiresAt   time.Time // zero = never
	Raw         json.RawMessage
}

func snapshotFromC(p capi.Struct_SS_s0_snapshot_info) *SandboxRootFSSnapshot {
	return &SandboxRootFSSnapshot{
		ID:          capi.S0_snapshot_info_id(p),
		SandboxID:   capi.S0_snapshot_info_sandbox_id(p),
		Name:        capi.S0_snapshot_info_name(p),
		Description: capi.S0_snapshot_info_description(p),
		CreatedAt:   unixMs(capi.S0_snapshot_info_created_at_unix_ms(p)),
		ExpiresAt:   unixMs(capi.S0_snapshot_info_expires_at_unix_ms(p)),
		Raw:         json.RawMessage(capi.S0_snapshot_info_json(p)),
	}
}

// SandboxRootFSSnapshotList is a sandbox's snapshots, newest first.
type SandboxRootFSSnapshotList struct {
	Snapshots []*SandboxRootFSSnapshot
	Count     int
}

// FileType is the type of a FileInfo.
type FileType string

// File types of the files API.
const (
	FileTypeFile    FileType = "file"
	FileTypeDir     FileType = "dir"
	FileTypeSymlink FileType = "symlink"
)

// FileInfo describes one path in a sandbox.
type FileInfo struct {
	Name       string
	Path       string
	Type       FileType // "" when the server sent another value
	Size       int64    // bytes
	Mode       os.FileMode
	ModTime    time.Time
	IsLink     bool
	LinkTarget string // for a stat'ed symlink
}

func fileInfoFromC(p capi.Struct_SS_s0_file_info) FileInfo {
	var t FileType
	switch capi.S0_file_info_type(p) {
	case 1:
		t = FileTypeFile
	case 2:
		t = FileTypeDir
	case 3:
		t = FileTypeSymlink
	}
	return FileInfo{
		Name:       capi.S0_file_info_name(p),
		Path:       capi.S0_file_info_path(p),
		Type:       t,
		Size:       capi.S0_file_info_size_bytes(p),
		Mode:       os.FileMode(capi.S0_file_info_mode(p)),
		ModTime:    unixMs(capi.S0_file_info_mod_time_unix_ms(p)),
		IsLink:     capi.S0_file_info_is_link(p),
		LinkTarget: capi.S0_file_info_link_target(p),
	}
}
