package store_test

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID: the CPU time of the calling
// thread, to the nanosecond (getrusage's is sampled at the scheduler tick).
const clockThreadCPUTime = 3

// threadCPU is the CPU time the calling OS thread has used, or false when the system
// cannot tell. A benchmark locked to its thread measures with it the work of a query,
// whatever else the machine runs meanwhile (wall-clock percentiles on a loaded machine
// mostly measure the scheduler).
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
