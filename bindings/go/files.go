package sandbox0

import (
	"context"

	"github.com/libsandbox0/libsandbox0/bindings/go/internal/capi"
)

// The files API (docs/wire.md §3.9). Paths are absolute or relative to
// /workspace. On a paused sandbox with auto-resume the request wakes it
// first (ErrUnavailable reason waking_up while the wake has not committed;
// ErrResumeFailed when it failed; ErrUnavailable auto_resume_disabled
// without auto-resume). Each call is one request.

func (c *Client) filesCall(ctx context.Context, id, path string,
	f func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client)) error {
	if id == "" || path == "" {
		return invalid("sandbox id and path are required")
	}
	if err := noNUL(id, path); err != nil {
		return err
	}
	return c.do(ctx, nil, func(cc capi.Struct_SS_s0_client, _ capi.Struct_SS_s0_cancel_token, k capi.Struct_SS_s0go_call) {
		f(k, cc)
	})
}

// ReadFile reads a whole file. ErrNotFound (file_not_found), ErrConflict
// (path_not_file).
func (c *Client) ReadFile(ctx context.Context, sandboxID, path string) ([]byte, error) {
	var out []byte
	err := c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		if capi.S0go_files_read(k, cc, sandboxID, path) == 0 {
			out = capi.S0go_call_data(k)
			if out == nil {
				out = []byte{}
			}
		}
	})
	return out, err
}

// WriteFile writes a whole file atomically (parents created, mode 0644).
// ErrTooLarge over 100 MiB (nothing written).
func (c *Client) WriteFile(ctx context.Context, sandboxID, path string, data []byte) error {
	return c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		capi.S0go_files_write(k, cc, sandboxID, path, string(data))
	})
}

// Mkdir makes a directory; without recursive an existing path is
// ErrConflict (path_exists).
func (c *Client) Mkdir(ctx context.Context, sandboxID, path string, recursive bool) error {
	r := 0
	if recursive {
		r = 1
	}
	return c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		capi.S0go_files_mkdir(k, cc, sandboxID, path, r)
	})
}

// DeleteFile deletes a file or a tree; a missing path succeeds.
func (c *Client) DeleteFile(ctx context.Context, sandboxID, path string) error {
	return c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		capi.S0go_files_delete(k, cc, sandboxID, path)
	})
}

// StatFile lstats a path (symlinks are reported, not followed).
func (c *Client) StatFile(ctx context.Context, sandboxID, path string) (*FileInfo, error) {
	var out *FileInfo
	err := c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		p := capi.S0go_files_stat(k, cc, sandboxID, path)
		if p != nil && p.Swigcptr() != 0 {
			defer capi.S0_file_info_free(p)
			fi := fileInfoFromC(p)
			out = &fi
		}
	})
	return out, err
}

// ListFiles lists a directory. ErrNotFound (directory_not_found),
// ErrConflict (path_not_directory).
func (c *Client) ListFiles(ctx context.Context, sandboxID, path string) ([]FileInfo, error) {
	var out []FileInfo
	err := c.filesCall(ctx, sandboxID, path, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		p := capi.S0go_files_list(k, cc, sandboxID, path)
		if p == nil || p.Swigcptr() == 0 {
			return
		}
		defer capi.S0_file_list_free(p)
		n := capi.S0_file_list_length(p)
		out = make([]FileInfo, 0, n)
		for i := int64(0); i < n; i++ {
			out = append(out, fileInfoFromC(capi.S0_file_list_at(p, i)))
		}
	})
	return out, err
}

// MoveFile moves or renames a path (destination parents created).
// ErrNotFound when the source is missing.
func (c *Client) MoveFile(ctx context.Context, sandboxID, source, destination string) error {
	if destination == "" {
		return invalid("destination is required")
	}
	if err := noNUL(destination); err != nil {
		return err
	}
	return c.filesCall(ctx, sandboxID, source, func(k capi.Struct_SS_s0go_call, cc capi.Struct_SS_s0_client) {
		capi.S0go_files_move(k, cc, sandboxID, source, destination)
	})
}

func (s *Sandbox) cl() *Client {
	if s.client == nil {
		panic("sandbox0: Sandbox has no client (use Client.Sandbox(id) or a Sandbox a Client returned)")
	}
	return s.client
}

// ReadFile is Client.ReadFile on this sandbox.
func (s *Sandbox) ReadFile(ctx context.Context, path string) ([]byte, error) {
	return s.cl().ReadFile(ctx, s.ID, path)
}

// WriteFile is Client.WriteFile on this sandbox.
func (s *Sandbox) WriteFile(ctx context.Context, path string, data []byte) error {
	return s.cl().WriteFile(ctx, s.ID, path, data)
}

// Mkdir is Client.Mkdir on this sandbox.
func (s *Sandbox) Mkdir(ctx context.Context, path string, recursive bool) error {
	return s.cl().Mkdir(ctx, s.ID, path, recursive)
}

// DeleteFile is Client.DeleteFile on this sandbox.
func (s *Sandbox) DeleteFile(ctx context.Context, path string) error {
	return s.cl().DeleteFile(ctx, s.ID, path)
}

// StatFile is Client.StatFile on this sandbox.
func (s *Sandbox) StatFile(ctx context.Context, path string) (*FileInfo, error) {
	return s.cl().StatFile(ctx, s.ID, path)
}

// ListFiles is Client.ListFiles on this sandbox.
func (s *Sandbox) ListFiles(ctx context.Context, path string) ([]FileInfo, error) {
	return s.cl().ListFiles(ctx, s.ID, path)
}

// MoveFile is Client.MoveFile on this sandbox.
func (s *Sandbox) MoveFile(ctx context.Context, source, destination string) error {
	return s.cl().MoveFile(ctx, s.ID, source, destination)
}
