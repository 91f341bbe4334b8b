package ingest

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeProcs records the P counts a spareProc sets.
type fakeProcs struct {
	mu  sync.Mutex
	n   int
	set []int
}

func (f *fakeProcs) procs(n int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	prev := f.n
	if n > 0 {
		f.n = n
		f.set = append(f.set, n)
	}
	return prev
}

// defaultProcs is runtime.SetDefaultGOMAXPROCS on a machine of 2 CPUs.
func (f *fakeProcs) defaultProcs() { f.procs(2) }

func (f *fakeProcs) history() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.set...)
}

// waitFor polls cond for up to 10 s: a liveness bound, not a timing assertion.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The first of overlapping publishes raises the P count by one, and it is lowered again
// only once idle has passed with none running; a publish within idle keeps it.
func TestSpareProcWhilePublishing(t *testing.T) {
	f, gc := &fakeProcs{n: 2}, &fakeProcs{n: 100}
	s := &spareProc{set: f.procs, setDefault: f.defaultProcs, setGC: gc.procs, idle: 20 * time.Millisecond}
	if s.acquire() {
		t.Errorf("off (not enabled): acquire counted the publish")
	}
	if got := f.history(); len(got) != 0 {
		t.Fatalf("off (not enabled): P counts set %v, want none", got)
	}
	s.enable(400)
	s.acquire()
	s.acquire()
	if got := f.history(); len(got) != 1 || got[0] != 3 {
		t.Fatalf("two publishes: P counts set %v, want [3]", got)
	}
	if got := gc.history(); len(got) != 1 || got[0] != 400 {
		t.Fatalf("two publishes: GC percents set %v, want [400]", got)
	}
	s.release()
	time.Sleep(3 * s.idle)
	if got := f.history(); len(got) != 1 {
		t.Fatalf("one publish still running: P counts set %v, want [3] (kept)", got)
	}
	s.release()
	s.acquire() // within idle of the last release: the spare P stays
	if got := f.history(); len(got) != 1 {
		t.Fatalf("a publish within idle: P counts set %v, want [3] (kept)", got)
	}
	s.release()
	waitFor(t, "the spare P given back after the last publish", func() bool { return len(f.history()) == 2 })
	if got := f.history(); got[1] != 2 {
		t.Fatalf("P counts set %v, want [3 2]", got)
	}
	if got := gc.history(); len(got) != 2 || got[1] != 100 {
		t.Fatalf("GC percents set %v, want [400 100] (restored with the P count)", got)
	}
	s.acquire()
	if got := f.history(); len(got) != 3 || got[2] != 3 {
		t.Fatalf("a publish after the spare P was given back: P counts set %v, want [3 2 3]", got)
	}
	s.enable(0) // again, while raised: the base stays 2
	s.release()
	waitFor(t, "the spare P given back", func() bool { return len(f.history()) == 4 })
	if got := f.history(); got[3] != 2 {
		t.Fatalf("after enabling again while raised: P counts set %v, want [3 2 3 2]", got)
	}
}

// fakeSpare puts a spareProc over a fakeProcs of 2 Ps in place of the process's for the
// test, and returns the fake.
func fakeSpare(t *testing.T, idle time.Duration) *fakeProcs {
	t.Helper()
	f := &fakeProcs{n: 2}
	old := spare
	spare = &spareProc{set: f.procs, setDefault: f.defaultProcs, idle: idle}
	t.Cleanup(func() { spare = old })
	return f
}

// RunLowPriority holds the spare P while its function runs.
func TestRunLowPriorityHoldsTheSpareProc(t *testing.T) {
	f := fakeSpare(t, time.Hour)
	spare.enable(0)
	var inside int
	RunLowPriority(func() { inside = f.procs(0) })
	if inside != 3 {
		t.Errorf("P count during RunLowPriority %d, want 3", inside)
	}
}

// A publish that started before EnableSpareProc and ends after it is not counted as
// ending: the next publishes raise the P count and give it back.
func TestRunLowPriorityEnabledMidPublish(t *testing.T) {
	f := fakeSpare(t, time.Millisecond)
	RunLowPriority(func() { spare.enable(0) })
	RunLowPriority(func() {})
	waitFor(t, "the spare P given back after the publish", func() bool { return len(f.history()) == 2 })
	if got := f.history(); got[0] != 3 || got[1] != 2 {
		t.Fatalf("P counts set %v, want [3 2]", got)
	}
}

// A GC percent changed by someone else while publishes ran (startupGC putting its own
// back) is not overwritten when the spare P is given back.
func TestSpareProcKeepsAnotherGCPercent(t *testing.T) {
	f, gc := &fakeProcs{n: 2}, &fakeProcs{n: 400} // startupGC's 400 in force
	s := &spareProc{set: f.procs, setDefault: f.defaultProcs, setGC: gc.procs, idle: time.Millisecond}
	s.enable(400)
	s.acquire()
	gc.procs(100) // startupGC's restore
	s.release()
	waitFor(t, "the spare P given back", func() bool { return len(f.history()) == 2 })
	if got := gc.procs(0); got != 100 {
		t.Errorf("GC percent %d after the publishes, want 100 (set while they ran)", got)
	}
}

// A lowering timer that fired as a publish started does not lower the P count that a
// later release's timer is counting for.
func TestSpareProcStaleTimer(t *testing.T) {
	f := &fakeProcs{n: 2}
	s := &spareProc{set: f.procs, setDefault: f.defaultProcs, idle: time.Hour}
	s.enable(0)
	s.acquire()
	s.release() // timer 1
	stale := s.gen
	s.acquire() // too late to stop timer 1, say
	s.release() // timer 2
	s.lowerIfIdle(stale)
	if got := f.history(); len(got) != 1 {
		t.Fatalf("a stale timer: P counts set %v, want [3] (kept for timer 2)", got)
	}
	s.lowerIfIdle(s.gen)
	if got := f.history(); len(got) != 2 || got[1] != 2 {
		t.Fatalf("timer 2: P counts set %v, want [3 2]", got)
	}
}

// A flood of publishes, more than lowPriorityThreads at once and in waves that start as
// the lowering timer fires, only ever moves the P count between the base and one more,
// and gives the spare P back after the last.
func TestSpareProcUnderAFlood(t *testing.T) {
	f := fakeSpare(t, time.Millisecond)
	spare.enable(0)
	var lowered atomic.Int64 // publishes that ran without the spare P
	for wave := range 20 {
		var wg sync.WaitGroup
		for range 2 * lowPriorityThreads {
			wg.Go(func() {
				RunLowPriority(func() {
					if f.procs(0) != 3 {
						lowered.Add(1)
					}
				})
			})
		}
		wg.Wait()
		time.Sleep(time.Duration(wave%3) * time.Millisecond) // before, at and after idle
	}
	if n := lowered.Load(); n > 0 {
		t.Errorf("%d publishes ran without the spare P", n)
	}
	waitFor(t, "the spare P given back after the flood", func() bool { return f.procs(0) == 2 })
	got := f.history()
	for i, n := range got {
		if want := []int{3, 2}[i%2]; n != want {
			t.Fatalf("P counts set %v: #%d is %d, want alternately 3 and 2", got, i, n)
		}
	}
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.running != 0 || spare.raised {
		t.Errorf("after the flood: %d publishes counted running, raised %v; want 0, false", spare.running, spare.raised)
	}
}

// The spare P is one more than the runtime's count as a publish starts, and lowering hands
// the count back to the runtime's default: a CPU quota raised between publishes is
// followed, not undone by a count remembered from before.
func TestSpareProcFollowsTheDefault(t *testing.T) {
	f := &fakeProcs{n: 2}
	var mu sync.Mutex
	def := 2
	s := &spareProc{set: f.procs, idle: time.Millisecond,
		setDefault: func() { mu.Lock(); n := def; mu.Unlock(); f.procs(n) }}
	s.enable(0)
	s.acquire()
	s.release()
	waitFor(t, "the spare P given back", func() bool { return len(f.history()) == 2 })
	mu.Lock()
	def = 4
	mu.Unlock()
	f.procs(4) // the runtime follows the new quota
	s.acquire()
	s.release()
	waitFor(t, "the spare P given back again", func() bool { return len(f.history()) == 5 })
	if got, want := f.history(), []int{3, 2, 4, 5, 4}; !slices.Equal(got, want) {
		t.Errorf("P counts set %v, want %v", got, want)
	}
}
