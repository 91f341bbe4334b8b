//go:build linux

package ingest

import "syscall"

// setThreadNice sets the calling OS thread's niceness (on Linux, PRIO_PROCESS with a
// thread id applies to that thread alone).
func setThreadNice(n int) error {
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), n)
}

// threadNice is the calling OS thread's niceness.
func threadNice() (int, error) {
	// The raw system call answers 20 - nice, so that it is never negative.
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	return 20 - p, err
}
