package store_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pluginyard/registry/store"
)

func TestLockDirTwoOpensInOneProcess(t *testing.T) {
	dir := t.TempDir()
	first, err := store.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, store.LockFile))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q (%v), want this process's pid %d", b, err, os.Getpid())
	}
	_, err = store.LockDir(dir)
	var le *store.LockedError
	if !errors.As(err, &le) || !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second LockDir in the same process: %v, want a LockedError", err)
	}
	if le.PID != os.Getpid() || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Errorf("LockedError names pid %d (%q), want %d", le.PID, err, os.Getpid())
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := store.LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after Close: %v", err)
	}
	_ = again.Close()
}

// TestLockDirTwoProcesses locks in a child process, checks that this one is refused with
// the child's pid, SIGKILLs the child and checks that the lock went with it.
func TestLockDirTwoProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderProcess$")
	cmd.Env = append(os.Environ(), "STORE_LOCK_HOLD="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("holder process said %q (%v)", line, err)
	}
	_, err = store.LockDir(dir)
	var le *store.LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Errorf("LockDir while another process holds it: %v, want a LockedError naming pid %d", err, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	l, err := store.LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after the holder was killed: %v", err)
	}
	_ = l.Close()
}

// TestLockHolderProcess is the child of TestLockDirTwoProcesses: it holds the lock until
// its stdin closes.
func TestLockHolderProcess(t *testing.T) {
	dir := os.Getenv("STORE_LOCK_HOLD")
	if dir == "" {
		t.Skip("helper process of TestLockDirTwoProcesses")
	}
	l, err := store.LockDir(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = l.Close()
	os.Exit(0)
}
