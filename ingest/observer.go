package ingest

import (
	"errors"
	"time"
)

// Observer is told what the pipeline did, for metrics. Its methods are called
// synchronously on the publishing or rebuilding goroutine, so they must be quick and safe
// for concurrent use.
type Observer interface {
	// PublishDone reports one publish: its outcome (see PublishOutcome) and the rule ids
	// of the problems that refused it (none when accepted).
	PublishDone(outcome string, rules []string)
	// IndexBuilt reports one index rebuild: how long it took, and, when it was swapped in
	// (err == nil), the Kandev document's size in bytes and its entry count.
	IndexBuilt(took time.Duration, bytes, entries int, err error)
}

// Publish outcomes passed to Observer.PublishDone.
const (
	OutcomeCreated   = "created"   // a new release
	OutcomeRepeated  = "repeated"  // identical bytes already published
	OutcomeInvalid   = "invalid"   // refused: the package or its signature
	OutcomeForbidden = "forbidden" // refused: not listed or not an owner
	OutcomeConflict  = "conflict"  // refused: the version exists with other bytes
	OutcomeTooLarge  = "too_large" // refused: over a size limit
	OutcomeError     = "error"     // an internal error (I/O, database)
)

// PublishOutcome names the outcome of a Publish call from its result and error.
func PublishOutcome(res *PublishResult, err error) string {
	switch {
	case err == nil && res != nil && !res.Created:
		return OutcomeRepeated
	case err == nil:
		return OutcomeCreated
	case errors.Is(err, ErrInvalid):
		return OutcomeInvalid
	case errors.Is(err, ErrForbidden):
		return OutcomeForbidden
	case errors.Is(err, ErrConflict):
		return OutcomeConflict
	case errors.Is(err, ErrTooLarge):
		return OutcomeTooLarge
	}
	return OutcomeError
}

func (s *Service) observePublish(res *PublishResult, err error) {
	if s.cfg.Observer == nil {
		return
	}
	var rules []string
	var r *Refusal
	if errors.As(err, &r) {
		rules = r.Problems.Errors().Rules()
	}
	s.cfg.Observer.PublishDone(PublishOutcome(res, err), rules)
}

func (s *Service) observeRebuild(start time.Time, docs *Documents, err error) {
	if s.cfg.Observer == nil {
		return
	}
	var size, entries int
	if err == nil && docs != nil {
		size, entries = docs.Kandev.Body.Len(), docs.Plugins
	}
	s.cfg.Observer.IndexBuilt(time.Since(start), size, entries, err)
}
