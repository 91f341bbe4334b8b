package ingest

import (
	"fmt"
	"sync"
)

// buildQueue batches the document builds of publishes committed close together (a group
// commit of the index): a publish commits its row under rebuildMu, queues its package and
// waits; one waiter at a time takes rebuildMu again and builds every package queued so far,
// so that sixteen publishes arriving together cost one incremental build, not sixteen in
// a row. A publish still returns only once the documents in force show it.
type buildQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	ids     []string // committed, not yet built
	what    []string // their changes ("publish acme-hello@1.2.0"), for a failed build's report
	queued  uint64   // tickets handed out
	built   uint64   // every ticket up to it has been built (or its build failed and is retried)
	running bool     // a waiter is building
	batches uint64   // builds run, for tests and metrics
}

func newBuildQueue() *buildQueue {
	q := &buildQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// add queues package id, committed by the change what, and returns its ticket. rebuildMu
// is held, so tickets follow the commits' order.
func (q *buildQueue) add(id, what string) uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.ids, q.what = append(q.ids, id), append(q.what, what)
	q.queued++
	return q.queued
}

// last is the last ticket handed out: waiting for it waits for every commit so far.
func (q *buildQueue) last() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// take empties the queue: the packages to build, a description of their changes and the
// last ticket they cover. rebuildMu is held.
func (q *buildQueue) take() (ids []string, what string, upTo uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids, upTo = q.ids, q.queued
	switch len(q.what) {
	case 0:
	case 1:
		what = q.what[0]
	default:
		what = fmt.Sprintf("%s and %d more", q.what[0], len(q.what)-1)
	}
	q.ids, q.what = nil, nil
	return ids, what, upTo
}

// wait returns once ticket t is built. A waiter finding no build running runs one (build)
// for everything queued; the others wait for it, and run the next if it did not cover them.
func (q *buildQueue) wait(t uint64, build func() uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.built < t {
		if q.running {
			q.cond.Wait()
			continue
		}
		q.running = true
		q.mu.Unlock()
		upTo := build()
		q.mu.Lock()
		q.running = false
		q.batches++
		q.built = max(q.built, upTo)
		q.cond.Broadcast()
	}
}

// buildQueued builds every package queued (afterChange) and returns the last ticket it
// covered.
func (s *Service) buildQueued() uint64 {
	if s.beforeBuild != nil {
		s.beforeBuild()
	}
	s.rebuildMu.Lock()
	defer s.rebuildMu.Unlock()
	ids, what, upTo := s.builds.take()
	if len(ids) > 0 {
		s.afterChange(what, ids...)
	}
	return upTo
}
