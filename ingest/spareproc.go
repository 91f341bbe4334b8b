package ingest

import (
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

// A publish runs on a low-priority thread (RunLowPriority): while it waits for a CPU behind
// requests, that thread holds its P, which a request being served must not need. So while
// publishes run, the runtime gets one P more than it would use; spareIdle after the last
// one ends it is given back, because an idle P costs every request a little (a new
// goroutine, net/http's background read for one, wakes a thread for it: 8 % more CPU per
// /index.json in the A/B runs of bench/scale's gzip phase, 3 Ps against 2 on 2 CPUs).
// Changing GOMAXPROCS stops the world for a moment, so it happens at those two edges only,
// not per publish.
//
// While publishes run the collector may also let the heap grow further between
// collections (publishGC): a publish makes garbage the size of the documents it replaces
// (5 MiB of index.json at 10k plugins and up), and at the default GOGC a stream of them
// starts a collection every few publishes, whose stops of the world every reader waits
// for (bench/scale's readers phase at 10k, open loop: readers' p99 with a publisher 3.85×
// of alone at GOGC 100, 2.70× at 400; peak RSS 177 → 367 MiB).

// spareIdle is how long the spare P stays after the last publish: a stream of publishes
// keeps it rather than paying two stops of the world each.
const spareIdle = time.Second

// spareProc is the P count policy; off until EnableSpareProc. Raised, the P count is one
// more than it was; lowered, it is the runtime's default again (setDefault), which the
// runtime then keeps updating as the CPUs available change, as without the policy.
type spareProc struct {
	mu         sync.Mutex
	on         bool
	running    int // publishes on low-priority threads
	raised     bool
	lower      *time.Timer
	gen        int           // the release that started lower: a timer that fired as a publish started is stale
	set        func(int) int // runtime.GOMAXPROCS
	setDefault func()        // runtime.SetDefaultGOMAXPROCS
	idle       time.Duration
	// gc, when set, is the GC percent while publishes run (publishGC); setGC is
	// debug.SetGCPercent, and gcBase what it answered when raised.
	gc     int
	setGC  func(int) int
	gcBase int
}

// PublishGC is the GC percent `registry serve` runs publishes at, unless the operator set
// GOGC (EnableSpareProc).
const PublishGC = 400

var spare = &spareProc{set: runtime.GOMAXPROCS, setDefault: runtime.SetDefaultGOMAXPROCS,
	setGC: debug.SetGCPercent, idle: spareIdle}

// EnableSpareProc turns the policy on for this process (`registry serve` does, unless the
// operator set GOMAXPROCS, which lowering would not keep); later calls change nothing.
// gcPercent, when not 0, is the GC percent while publishes run (PublishGC; 0 leaves the
// collector alone).
func EnableSpareProc(gcPercent int) { spare.enable(gcPercent) }

func (s *spareProc) enable(gcPercent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		s.on, s.gc = true, gcPercent
	}
}

// acquire is called as a publish starts: the first one raises the P count. It reports
// whether it counted the publish (the policy is on), which then must call release: a
// publish that started before EnableSpareProc must not end as one counted.
func (s *spareProc) acquire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return false
	}
	s.running++
	if s.lower != nil {
		s.lower.Stop()
		s.lower = nil
	}
	if !s.raised {
		s.set(s.set(0) + 1)
		if s.gc != 0 {
			s.gcBase = s.setGC(s.gc)
		}
		s.raised = true
	}
	return true
}

// release is called as a publish that acquire counted ends: after the last one, the P
// count is lowered again once no publish has started for idle.
func (s *spareProc) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.running == 0 && s.raised && s.lower == nil {
		s.gen++
		gen := s.gen
		s.lower = time.AfterFunc(s.idle, func() { s.lowerIfIdle(gen) })
	}
}

// lowerIfIdle is the timer of release number gen; one whose Stop came too late (it fired
// as a publish started) finds a later release's timer, or none, and leaves it.
func (s *spareProc) lowerIfIdle(gen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return
	}
	s.lower = nil
	if s.running == 0 && s.raised {
		s.setDefault()
		if s.gc != 0 {
			// Whoever changed the GC percent while publishes ran (cmd/registry's
			// startupGC putting its own back) keeps their value.
			if cur := s.setGC(s.gcBase); cur != s.gc {
				s.setGC(cur)
			}
		}
		s.raised = false
	}
}
