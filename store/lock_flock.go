//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package store

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// acquire opens path and takes an exclusive, non-blocking flock on it. flock belongs to
// the open file description, so a second open of the same file, even in this process,
// is refused: the lock means "one owner", not "one process".
func acquire(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		pid := holderPID(f)
		_ = f.Close()
		return nil, &LockedError{Path: path, PID: pid}
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return f, nil
}

// release unlocks and closes f (closing alone would unlock too).
func release(f *os.File) error {
	uerr := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return errors.Join(uerr, f.Close())
}
