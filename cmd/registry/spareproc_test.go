package main

import (
	"runtime"
	"testing"

	"github.com/pluginyard/registry/ingest"
)

// serve turns on the spare P while publishing (ingest.EnableSpareProc) unless GOMAXPROCS
// is set; either way it does not change the P count at start.
func TestSpareProc(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	t.Setenv("GOMAXPROCS", "")
	spareProc()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after spareProc, want %d (the spare P comes with a publish)", got, before)
	}
	ingest.RunLowPriority(func() {
		if got := runtime.GOMAXPROCS(0); got != before+1 {
			t.Errorf("GOMAXPROCS %d during a publish, want %d", got, before+1)
		}
	})
}
