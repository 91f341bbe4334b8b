// Package ingest is the publish pipeline: verify a package, check it against the curated
// list and its signing policy, store it durably, and rebuild the index documents. It also
// yanks, deprecates and counts downloads. It knows nothing of HTTP.
package ingest

import (
	"errors"
	"fmt"

	"github.com/pluginyard/registry/problem"
)

// Sentinel outcomes; a *Refusal wraps one of them so callers can map it to a status.
var (
	ErrInvalid   = errors.New("package invalid")   // 422
	ErrForbidden = errors.New("not allowed")       // 403
	ErrConflict  = errors.New("version conflict")  // 409
	ErrNotFound  = errors.New("not found")         // 404
	ErrTooLarge  = errors.New("package too large") // 413
)

// Refusal is a refused request: why (one of the sentinels), a message for people, and
// every problem found.
type Refusal struct {
	Kind     error
	Message  string
	Problems problem.List
}

func (r *Refusal) Error() string { return r.Message }

// Unwrap lets errors.Is match the sentinel.
func (r *Refusal) Unwrap() error { return r.Kind }

func refuse(kind error, problems problem.List, format string, args ...any) *Refusal {
	return &Refusal{Kind: kind, Message: fmt.Sprintf(format, args...), Problems: problems}
}
