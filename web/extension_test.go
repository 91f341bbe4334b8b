package web_test

import (
	"strings"
	"testing"

	"github.com/pluginyard/registry/web"
)

// The extension page carries the archived notice, the report form and the resolutions of
// actioned reports, as the plugin page does; none of them while there is nothing to show.
func TestExtensionPageArchivedAndReports(t *testing.T) {
	p := sampleExtension()
	_, doc := mustRender(t, web.Extension(p))
	for _, id := range []string{"archived-notice", "report-form", "report-resolution"} {
		if n := doc.Find(testid(id)).Length(); n != 0 {
			t.Errorf("an active, unreported extension's page shows %d %s", n, id)
		}
	}
	p.Archived = &web.Archived{Since: "2026-12-01"}
	p.Reports = web.ReportSection{FormURL: "/extensions/%40acme%2Fext/report", Versions: []string{"1.2.0"}, MaxReason: 4096,
		Notices: []web.ReportNotice{{Kind: "malicious", Version: "1.2.0", ReportedOn: "2026-12-01", ResolvedOn: "2026-12-02", Action: "quarantined", Resolution: "confirmed"}}}
	_, doc = mustRender(t, web.Extension(p))
	if notice := doc.Find(testid("archived-notice")); notice.Length() != 1 || !strings.Contains(notice.Text(), "2026-12-01") {
		t.Errorf("archived notice = %q (%d), want one naming the date", notice.Text(), notice.Length())
	}
	form := doc.Find(testid("report-form"))
	if form.Length() != 1 || form.AttrOr("action", "") == "" || !strings.Contains(form.AttrOr("action", ""), "/extensions/") {
		t.Errorf("report form action = %q (%d forms), want the extension's /report", form.AttrOr("action", ""), form.Length())
	}
	if got := form.Find(`option[value="1.2.0"]`).Length(); got != 1 {
		t.Errorf("the report form offers version 1.2.0 %d times", got)
	}
	res := doc.Find(testid("report-resolution"))
	if res.Length() != 1 || !strings.Contains(res.Text(), "Reported as malicious") || res.Find(testid("report-action")).Text() != "quarantined" {
		t.Errorf("report resolution = %q (%d)", res.Text(), res.Length())
	}
}
