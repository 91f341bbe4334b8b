package web_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/web"
)

// TestReadmeShowsStoredHTML checks the README section writes the stored HTML as it is
// (it was sanitized at publish) and says so when there is none.
func TestReadmeShowsStoredHTML(t *testing.T) {
	p := samplePlugin()
	p.READMEHTML = web.StoredREADME([]byte(`<h3>Stored</h3><p class="readme-truncated"><em>cut</em></p>`))
	_, doc := mustRender(t, web.Plugin(p))
	if got := doc.Find(testid("readme") + " h3").Text(); got != "Stored" {
		t.Errorf("README h3 = %q, want the stored markup", got)
	}
	if doc.Find(testid("readme")+" p.readme-truncated").Length() != 1 {
		t.Error("the stored truncation note is not shown")
	}
	p.READMEHTML = web.StoredREADME(nil)
	_, doc = mustRender(t, web.Plugin(p))
	if got := doc.Find(testid("readme")).Text(); !strings.Contains(got, "ships no README") {
		t.Errorf("README section without HTML = %q", got)
	}
}
