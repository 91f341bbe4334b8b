package verify

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID: the CPU time of the calling
// thread, to the nanosecond.
const clockThreadCPUTime = 3

// threadCPU is the CPU time the calling OS thread has used, or false when the system
// cannot tell: BenchmarkScanner reports it beside wall time, which on a shared, loaded
// machine mostly measures the scheduler.
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
