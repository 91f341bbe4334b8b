package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LockFile is the file inside the data directory that its owner (a running `registry
// serve`, or `registry restore`) holds locked and writes its pid into.
const LockFile = "registry.lock"

// ErrLocked reports that another process owns the data directory.
var ErrLocked = errors.New("data directory in use")

// LockedError names the lock file and, when it could be read, the pid of its holder.
type LockedError struct {
	Path string
	PID  int // 0 when the holder has not written it yet
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("store: %s is held by %s (a running `registry serve` or `registry restore`): %v", e.Path, who, ErrLocked)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// DirLock is the exclusive ownership of a data directory. The operating system drops it
// when the process ends, however it ends, so a killed server never leaves it behind
// (except on systems without flock; see lock_other.go).
type DirLock struct {
	f *os.File
}

// LockDir takes the data directory dir for this process, creating dir if needed, or
// returns a *LockedError (errors.Is ErrLocked) naming the holder's pid.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("store: data directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := acquire(path)
	if err != nil {
		return nil, err
	}
	if err := writePID(f); err != nil {
		_ = release(f)
		return nil, fmt.Errorf("store: lock %s: %w", path, err)
	}
	return &DirLock{f: f}, nil
}

// Close gives the directory up. The file stays (removing it would let a second process
// lock a fresh file while a third still holds the old one); its pid is cleared.
func (l *DirLock) Close() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := release(l.f)
	l.f = nil
	return err
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// holderPID reads the pid the holder wrote, or 0.
func holderPID(f *os.File) int {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 32))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}
