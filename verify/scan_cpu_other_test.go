//go:build !linux

package verify

import "time"

// threadCPU cannot tell a thread's CPU time outside Linux.
func threadCPU() (time.Duration, bool) { return 0, false }
