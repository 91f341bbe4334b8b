package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotEmpty is returned by Write for a folder that already holds something.
var ErrNotEmpty = errors.New("folder is not empty")

// Write renders Tree(kind, id) into dir, creating dir when it does not exist, and returns
// the files written. A dir that holds anything is refused with ErrNotEmpty unless force;
// with force, the tree's files replace files at the same paths and every other file stays.
func Write(ctx context.Context, dir string, kind Kind, id string, force bool) ([]File, error) {
	files, err := Tree(ctx, kind, id)
	if err != nil {
		return nil, err
	}
	if err := ready(dir, force); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := writeFile(dir, f); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// ready makes sure dir is a folder Write may fill.
func ready(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("scaffold: %w", err)
	case len(entries) > 0 && !force:
		return fmt.Errorf("scaffold: %s: %w (it holds %s%s); choose a new folder, or pass --force to write the files into it, replacing those with the same names", dir, ErrNotEmpty, entries[0].Name(), more(len(entries)-1))
	}
	return nil
}

func more(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

func writeFile(dir string, f File) error {
	full := filepath.Join(dir, filepath.FromSlash(f.Path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if err := os.WriteFile(full, f.Data, f.Mode); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	// WriteFile keeps the mode of a file it replaces (with --force).
	if err := os.Chmod(full, f.Mode); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}
