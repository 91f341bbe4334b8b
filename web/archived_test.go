package web_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/web"
)

func TestArchivedNotice(t *testing.T) {
	p := samplePlugin()
	_, doc := mustRender(t, web.Plugin(p))
	if n := doc.Find(testid("archived-notice")).Length(); n != 0 {
		t.Fatalf("an active package shows %d archived notices", n)
	}
	p.Archived = &web.Archived{Since: "2026-12-01"}
	_, doc = mustRender(t, web.Plugin(p))
	notice := doc.Find(testid("archived-notice"))
	if notice.Length() != 1 || !strings.Contains(notice.Text(), "2026-12-01") || !strings.Contains(notice.Text(), "still installs") {
		t.Fatalf("archived notice = %q (%d), want one naming the date and that it still installs", notice.Text(), notice.Length())
	}
	if doc.Find(testid("install-panel")).Length() != 1 {
		t.Errorf("an archived package lost its install panel")
	}
}

// The header says what a signature proves: provenance (repository and workflow, from the
// recorded facts) for Sigstore, a signature only for ed25519; never "verified publisher".
func TestHeaderSaysProvenanceNotTrust(t *testing.T) {
	sig := samplePlugin()
	sig.Card.Verified = true
	sig.Verification = web.Verification{SignatureType: "sigstore", Repository: "acme/kandev-stats", Workflow: ".github/workflows/release.yml", Ref: "refs/tags/v1.2.0"}
	ed := samplePlugin()
	ed.Card.Verified = true
	ed.Verification = web.Verification{SignatureType: "ed25519", KeyFingerprint: "SHA256:abc"}
	for _, tt := range []struct {
		name        string
		page        web.PluginPage
		want, never []string
	}{
		{"sigstore", sig, []string{"Has provenance", "acme/kandev-stats", "release.yml", "refs/tags/v1.2.0"}, []string{"Verified publisher", "trustworthy"}},
		{"ed25519", ed, []string{"Signed", "SHA256:abc", "not build provenance"}, []string{"Has provenance", "Verified publisher", "trustworthy"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, doc := mustRender(t, web.Plugin(tt.page))
			line := doc.Find(testid("verified-publisher")).Text()
			for _, w := range tt.want {
				if !strings.Contains(line, w) {
					t.Errorf("header line %q does not say %q", line, w)
				}
			}
			for _, w := range tt.never {
				if strings.Contains(line, w) {
					t.Errorf("header line %q says %q", line, w)
				}
			}
		})
	}
}
