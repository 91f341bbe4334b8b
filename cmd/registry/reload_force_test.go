package main

import (
	"errors"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/problem"
)

// TestForceOverridesOnlyTheShrinkGuard: a forced reload may override the shrink guard's
// refusal, never a host limit, a list problem or a failure of the store.
func TestForceOverridesOnlyTheShrinkGuard(t *testing.T) {
	refusal := func(rule string) error {
		return &ingest.Refusal{Kind: ingest.ErrInvalid, Message: rule, Problems: problem.List{{Rule: rule, Severity: problem.Error}}}
	}
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{refusal("index.shrink"), true},
		{refusal("index.size"), false},
		{refusal("registry.id.duplicate"), false},
		{errors.New("database is locked"), false},
		{nil, false},
	} {
		if got := isShrinkRefusal(tt.err); got != tt.want {
			t.Errorf("isShrinkRefusal(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}
