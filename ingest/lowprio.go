package ingest

import "runtime"

// lowPriorityThreads bounds the OS threads RunLowPriority holds at once: more than the CPUs
// (a publish also waits on its commit and its build), few enough to be cheap.
var lowPriorityThreads = max(16, 4*runtime.NumCPU())

var lowPrioritySlots = make(chan struct{}, lowPriorityThreads)

// PublishNice is how much nicer than the rest of the process publishes run (Linux;
// elsewhere they run at the process's priority): a publish verifies and builds for
// milliseconds at a time, and at the same priority on a busy machine it takes its share of
// the CPU from requests being served. Ten steps nicer, the kernel runs a waiting request
// first, and the publish gets the CPU the requests leave (all of it on an idle machine).
// See RunLowPriority.
const PublishNice = 10

// RunLowPriority runs f on an OS thread of its own, PublishNice nicer than the calling
// thread (at most 19), and returns when f has. The thread is never handed back to the Go runtime: it exits with the goroutine,
// and its niceness with it, so that no request is ever served from it afterwards (an
// unprivileged process could not raise its priority back). With EnableSpareProc (as
// `registry serve` calls it) the process has a spare P while publishes run, so that a
// low-priority thread waiting for a CPU never holds the P a request needs (spareproc.go).
//
// At most lowPriorityThreads run at once; more callers wait for a slot (as goroutines, not
// threads): a flood of concurrent publishes must not exhaust the process's OS threads
// (each locked thread is one, and Go stops the process past 10,000).
func RunLowPriority(f func()) {
	lowPrioritySlots <- struct{}{}
	defer func() { <-lowPrioritySlots }()
	if spare.acquire() {
		defer spare.release()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread() // not unlocked: the thread ends with this goroutine
		if n, err := threadNice(); err == nil {
			_ = setThreadNice(min(n+PublishNice, 19))
		}
		f()
	}()
	<-done
}
