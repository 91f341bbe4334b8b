package store_test

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the usage of the calling thread only.
const rusageThread = 1

// threadCPU is the CPU time (user and system) the calling OS thread has used, or false
// when the system cannot tell. A benchmark locked to its thread measures with it the work
// of a query, whatever else the machine runs meanwhile (wall-clock percentiles on a
// loaded machine mostly measure the scheduler).
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
