package main

import (
	"runtime"
	"testing"
)

// serve runs with one P more than the runtime would use (publishes run on low-priority
// threads that must not hold the P a request needs), unless GOMAXPROCS is set.
func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "")
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != before+1 {
		t.Errorf("GOMAXPROCS %d after spareProc, want %d", got, before+1)
	}
	runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "3")
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("with GOMAXPROCS set, spareProc changed it from %d to %d", before, got)
	}
}
