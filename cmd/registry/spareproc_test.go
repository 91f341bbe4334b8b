package main

import (
	"runtime"
	"testing"
)

// spareProc never changes the P count at start: the spare P comes with a publish
// (ingest.EnableSpareProc, tested in ingest).
func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	for _, env := range []string{"", "3"} {
		t.Setenv("GOMAXPROCS", env)
		spareProc()
		if got := runtime.GOMAXPROCS(0); got != before {
			t.Errorf("GOMAXPROCS=%q: %d after spareProc, want %d", env, got, before)
		}
	}
}
