package facade

import (
	"context"
	"errors"

	sandbox0 "github.com/libsandbox0/libsandbox0/bindings/go"
)

// Files is the E2B-style files view of a sandbox (sbx.Files()).
type Files struct{ s *Sandbox }

// Files returns the sandbox's files view.
func (s *Sandbox) Files() Files { return Files{s} }

// Read reads a whole file.
func (f Files) Read(ctx context.Context, path string) ([]byte, error) {
	return f.s.client.ReadFile(ctx, f.s.id, path)
}

// Write writes a whole file (parents created).
func (f Files) Write(ctx context.Context, path string, data []byte) error {
	return f.s.client.WriteFile(ctx, f.s.id, path, data)
}

// List lists a directory.
func (f Files) List(ctx context.Context, path string) ([]sandbox0.FileInfo, error) {
	return f.s.client.ListFiles(ctx, f.s.id, path)
}

// Exists reports whether a path exists.
func (f Files) Exists(ctx context.Context, path string) (bool, error) {
	_, err := f.s.client.StatFile(ctx, f.s.id, path)
	if errors.Is(err, sandbox0.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Remove deletes a file or a tree (a missing path succeeds).
func (f Files) Remove(ctx context.Context, path string) error {
	return f.s.client.DeleteFile(ctx, f.s.id, path)
}

// MakeDir makes a directory and its parents.
func (f Files) MakeDir(ctx context.Context, path string) error {
	return f.s.client.Mkdir(ctx, f.s.id, path, true)
}

// Rename moves a path.
func (f Files) Rename(ctx context.Context, oldPath, newPath string) error {
	return f.s.client.MoveFile(ctx, f.s.id, oldPath, newPath)
}
