//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// acquire creates path exclusively: its existence is the lock. Unlike flock, the
// operating system does not remove it when the process is killed, so the message says
// how to clear a stale one.
func acquire(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o640)
	if errors.Is(err, fs.ErrExist) {
		pid := 0
		if g, err := os.Open(path); err == nil {
			pid = holderPID(g)
			_ = g.Close()
		}
		return nil, fmt.Errorf("%w (if no registry runs with that pid, delete %s)", &LockedError{Path: path, PID: pid}, path)
	}
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return f, nil
}

// release closes and removes the lock file.
func release(f *os.File) error {
	cerr := f.Close()
	return errors.Join(cerr, os.Remove(f.Name()))
}
