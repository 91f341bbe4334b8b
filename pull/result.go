package pull

import (
	"fmt"
	"strings"
	"time"

	"github.com/pluginyard/registry/store"
)

// Result is what one round found for one repository.
type Result struct {
	Repo             string   // owner/name as listed
	Outcome          string   // store.SyncPublished, SyncUnchanged, SyncFailed, SyncError or SyncRateLimited
	Tag              string   // the latest release's tag, when known
	Published        []string // id@version newly accepted
	Unchanged        []string // id@version already published with identical bytes
	NotModified      bool     // the release answered 304
	Error            string
	Rules            []string // rule ids of the failures
	RateLimitedUntil time.Time
	NotChecked       bool   // skipped: this repository's rate-limit deadline has not passed
	RenamedTo        string // GitHub's name when it differs from the listed one (same ids)
}

// String is the progress line of `registry sync`.
func (r Result) String() string {
	var b strings.Builder
	b.WriteString(r.Repo + ": ")
	switch r.Outcome {
	case store.SyncRateLimited:
		b.WriteString("rate limited until " + r.RateLimitedUntil.UTC().Format(time.RFC3339))
		if r.NotChecked {
			b.WriteString(" (not checked)")
		}
	case store.SyncError:
		b.WriteString("error: " + r.Error)
	case store.SyncFailed:
		if parts := r.accepted(); len(parts) > 0 {
			b.WriteString(strings.Join(parts, "; ") + "; ")
		}
		fmt.Fprintf(&b, "failed: %s: %s", strings.Join(r.Rules, ", "), r.Error)
		if r.NotModified {
			b.WriteString(" (release unchanged since, 304)")
		}
	case store.SyncPublished:
		b.WriteString(strings.Join(r.accepted(), "; "))
	default:
		if r.NotModified || len(r.Unchanged) == 0 {
			b.WriteString("unchanged (304)")
		} else {
			b.WriteString("unchanged (" + strings.Join(r.Unchanged, ", ") + " already published)")
		}
	}
	if r.RenamedTo != "" {
		fmt.Fprintf(&b, " (GitHub now names it %s: update repo: in plugins.yaml)", r.RenamedTo)
	}
	return b.String()
}

// accepted lists what was published and what was already there.
func (r Result) accepted() []string {
	var parts []string
	if len(r.Published) > 0 {
		parts = append(parts, "published "+strings.Join(r.Published, ", "))
	}
	if len(r.Unchanged) > 0 {
		parts = append(parts, "unchanged "+strings.Join(r.Unchanged, ", "))
	}
	return parts
}

// Summary is one round.
type Summary struct {
	Results                                         []Result
	Published, Unchanged, Failed, Errors, RateLimit int
	RateLimitedUntil                                time.Time // the latest deadline of a rate-limited repository, else zero
}

func (s *Summary) add(r Result) {
	s.Results = append(s.Results, r)
	switch r.Outcome {
	case store.SyncPublished:
		s.Published++
	case store.SyncUnchanged:
		s.Unchanged++
	case store.SyncFailed:
		s.Failed++
	case store.SyncError:
		s.Errors++
	case store.SyncRateLimited:
		s.RateLimit++
		if r.RateLimitedUntil.After(s.RateLimitedUntil) {
			s.RateLimitedUntil = r.RateLimitedUntil
		}
	}
}

// String is the total line of `registry sync`.
func (s Summary) String() string {
	return fmt.Sprintf("%d repositories: %d published, %d unchanged, %d failed, %d errors, %d rate limited",
		len(s.Results), s.Published, s.Unchanged, s.Failed, s.Errors, s.RateLimit)
}
