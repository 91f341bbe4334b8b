package web_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/web"
)

// TestVerificationPanelStates renders each recorded checksums state; the page claims a
// check only when one was recorded.
func TestVerificationPanelStates(t *testing.T) {
	tests := []struct {
		name  string
		v     web.Verification
		state string
		text  string
		hint  string
	}{
		{"verified", web.Verification{Checksums: web.ChecksumsVerified, ChecksumFiles: 1}, "verified", "lists the package's 1 file, and it matches", "checked its files against checksums.txt"},
		{"absent", web.Verification{Checksums: web.ChecksumsAbsent}, "absent", "No checksums.txt", "ships no checksums.txt"},
		{"not recorded", web.Verification{}, "not-recorded", "Not recorded", "cannot say who built it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePlugin()
			p.Verification = tt.v
			_, doc := mustRender(t, web.Plugin(p))
			cs := doc.Find(testid("verification-panel") + " " + testid("checksums"))
			if state, _ := cs.Attr("data-checksums"); state != tt.state || !strings.Contains(cs.Text(), tt.text) {
				t.Errorf("checksums %s %q, want %s %q", state, cs.Text(), tt.state, tt.text)
			}
			if hint := doc.Find(testid("unsigned-hint")).Text(); !strings.Contains(hint, tt.hint) {
				t.Errorf("unsigned hint %q, want %q", hint, tt.hint)
			}
		})
	}
}
