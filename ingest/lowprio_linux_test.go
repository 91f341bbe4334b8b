//go:build linux

package ingest

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
)

// A publish runs on a thread at PublishNice, and the caller's thread keeps its niceness.
func TestRunLowPriorityNicesItsOwnThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	var inside int
	RunLowPriority(func() { inside, err = threadNice() })
	if want := min(before+PublishNice, 19); err != nil || inside != want {
		t.Errorf("inside RunLowPriority the thread's niceness is %d (%v), want %d (%d nicer than the caller's %d)", inside, err, want, PublishNice, before)
	}
	if after, _ := threadNice(); after != before {
		t.Errorf("the caller's thread niceness went from %d to %d", before, after)
	}
}

// A publish, its verification and its build, runs at PublishNice.
func TestPublishRunsAtLowPriority(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	base, err := threadNice()
	if err != nil {
		t.Fatal(err)
	}
	nice := -1
	s.afterCommit = func() { nice, err = threadNice() } // in the build after the commit
	if _, perr := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.0.0", "x")),
		FileName: "acme-hello-1.0.0.tar.gz", Actor: anAdmin}); perr != nil {
		t.Fatal(perr)
	}
	if want := min(base+PublishNice, 19); err != nil || nice != want {
		t.Errorf("the publish built at niceness %d (%v), want %d", nice, err, want)
	}
}

// However many publishes run at once, at most lowPriorityThreads OS threads are held.
func TestRunLowPriorityIsBounded(t *testing.T) {
	var mu sync.Mutex
	in, most := 0, 0
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 * lowPriorityThreads {
		wg.Go(func() {
			RunLowPriority(func() {
				mu.Lock()
				in++
				most = max(most, in)
				mu.Unlock()
				<-release
				mu.Lock()
				in--
				mu.Unlock()
			})
		})
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := in
		mu.Unlock()
		if n == lowPriorityThreads {
			break
		}
	}
	close(release)
	wg.Wait()
	if most != lowPriorityThreads {
		t.Errorf("%d callers ran at most %d at once, want %d (the bound)", 3*lowPriorityThreads, most, lowPriorityThreads)
	}
}
