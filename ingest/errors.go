// Package ingest is the publish pipeline: verify a package, check it against the curated
// list and its signing policy, store it durably, and rebuild the index documents. It also
// yanks, deprecates and counts downloads. It knows nothing of HTTP.
package ingest

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/pluginyard/registry/problem"
)

// Sentinel outcomes; a *Refusal wraps one of them so callers can map it to a status.
var (
	ErrInvalid   = errors.New("package invalid")   // 422
	ErrForbidden = errors.New("not allowed")       // 403
	ErrConflict  = errors.New("version conflict")  // 409
	ErrNotFound  = errors.New("not found")         // 404
	ErrTooLarge  = errors.New("package too large") // 413
	// ErrStorageFull is a write that failed for lack of space (ENOSPC, EDQUOT): 507. The
	// request stored nothing; it is the operator's to fix, not the author's.
	ErrStorageFull = errors.New("the registry's storage is full")
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

// refuseOne is a refusal with a single error-severity problem (rule at path).
func refuseOne(kind error, rule, path, format string, args ...any) *Refusal {
	msg := fmt.Sprintf(format, args...)
	return &Refusal{Kind: kind, Message: msg, Problems: problem.List{{Rule: rule, Path: path, Severity: problem.Error, Message: msg}}}
}

// StorageError is a write the storage refused for lack of space.
type StorageError struct {
	Op  string // what was being written, e.g. "spool the upload"
	Err error
}

func (e *StorageError) Error() string {
	return fmt.Sprintf("%s: could not %s: %v; nothing was stored: retry later, and tell the registry's operator", ErrStorageFull, e.Op, e.Err)
}

// Unwrap lets errors.Is match ErrStorageFull and the errno.
func (e *StorageError) Unwrap() []error { return []error{ErrStorageFull, e.Err} }

// storageErr marks err as a full disk when it is one, else wraps it with op.
func storageErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &StorageError{Op: op, Err: err}
	}
	return fmt.Errorf("ingest: %s: %w", op, err)
}
