package server_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// reportEnv is a registry with acme-hello 1.0.0 published. Each test gets its own: the
// report budget is ten a minute per address, and every request here comes from 127.0.0.1.
func reportEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, "")
	if r := e.publish(adminToken, "acme-hello-1.0.0.tar.gz", pkg(t, "acme-hello", "1.0.0", "x")); r.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	return e
}

// postForm posts the page's form with the given extra headers (name, value pairs).
func (e *env) postForm(path string, form url.Values, header ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(req)
}

// postRaw posts body with a content type and no token.
func (e *env) postRaw(path, contentType string, body []byte, header ...string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return e.do(req)
}

func (e *env) reports(query string) []store.Report {
	e.t.Helper()
	r := e.get("/api/v1/admin/reports"+query, "Authorization", "Bearer "+adminToken)
	var body struct {
		Reports []store.Report `json:"reports"`
	}
	if r.Status != http.StatusOK {
		e.t.Fatalf("admin reports: %d %s", r.Status, r.Body)
	}
	r.json(e.t, &body)
	return body.Reports
}

// pageRules are the rule ids a report result page lists.
func pageRules(r response) []string {
	var out []string
	for _, part := range strings.Split(string(r.Body), `data-testid="report-rule">`)[1:] {
		out = append(out, part[:strings.Index(part, "<")])
	}
	return out
}

func TestReportFormFilesAReport(t *testing.T) {
	e := reportEnv(t)
	page := e.get("/plugins/acme-hello")
	for _, want := range []string{`data-testid="report-form"`, `method="post"`, `action="/plugins/acme-hello/report"`, `name="reason"`, `maxlength="4096"`, `<option value="1.0.0">`} {
		if !bytes.Contains(page.Body, []byte(want)) {
			t.Errorf("package page lacks %s", want)
		}
	}
	if panel := between(string(page.Body), `data-testid="report-panel"`, "</section>"); strings.Contains(panel, "<script") || regexp.MustCompile(` on[a-z]+=`).MatchString(panel) {
		t.Errorf("the report form needs a script:\n%s", panel)
	}
	reason := `<script>alert("x")</script> posts ~/.ssh away`
	r := e.postForm("/plugins/acme-hello/report", url.Values{"kind": {"malicious"}, "version": {"1.0.0"}, "reason": {reason}},
		"Sec-Fetch-Site", "same-origin", "Origin", e.srv.URL)
	if r.Status != http.StatusOK || !bytes.Contains(r.Body, []byte(`data-testid="report-filed"`)) {
		t.Fatalf("form: %d %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("confirmation Content-Type %q", ct)
	}
	if bytes.Contains(r.Body, []byte("<script>alert")) || bytes.Contains(r.Body, []byte("ssh away")) {
		t.Errorf("the confirmation echoes the reason:\n%s", r.Body)
	}
	got := e.reports("?open=true")
	if len(got) != 1 || got[0].Kind != "malicious" || got[0].Version != "1.0.0" || got[0].Reason != reason || got[0].PackageID != "acme-hello" {
		t.Fatalf("stored reports = %+v", got)
	}
	if !bytes.Contains(r.Body, []byte(fmt.Sprintf("Report #%d (malicious)", got[0].ID))) {
		t.Errorf("the confirmation does not name report %d:\n%s", got[0].ID, r.Body)
	}
}

func TestReportFormRefusals(t *testing.T) {
	e := reportEnv(t)
	tests := []struct {
		name   string
		path   string
		form   url.Values
		header []string
		status int
		rules  []string
	}{
		{"from another site (Sec-Fetch-Site)", "/plugins/acme-hello/report", url.Values{"kind": {"broken"}, "reason": {"x"}},
			[]string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}, http.StatusForbidden, []string{"report.origin"}},
		{"from another site (Origin only)", "/plugins/acme-hello/report", url.Values{"kind": {"broken"}, "reason": {"x"}},
			[]string{"Origin", "https://evil.example"}, http.StatusForbidden, []string{"report.origin"}},
		{"unknown package", "/plugins/acme-nobody/report", url.Values{"kind": {"broken"}, "reason": {"x"}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusNotFound, []string{"report.package.unknown"}},
		{"kind and reason", "/plugins/acme-hello/report", url.Values{"kind": {"spam"}, "reason": {""}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusUnprocessableEntity, []string{"report.kind", "report.reason.missing"}},
		{"reason over 4 KiB", "/plugins/acme-hello/report", url.Values{"kind": {"broken"}, "reason": {strings.Repeat("x", ingest.MaxReportReason+1)}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusUnprocessableEntity, []string{"report.reason.length"}},
		{"body over 8 KiB", "/plugins/acme-hello/report", url.Values{"kind": {"broken"}, "reason": {strings.Repeat("x", ingest.MaxReportBody)}},
			[]string{"Sec-Fetch-Site", "same-origin"}, http.StatusRequestEntityTooLarge, []string{"report.body.size"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postForm(tt.path, tt.form, tt.header...)
			if r.Status != tt.status || !bytes.Contains(r.Body, []byte(`data-testid="report-problems"`)) {
				t.Fatalf("%d %s, want %d with a problems page", r.Status, r.Body, tt.status)
			}
			if got := pageRules(r); strings.Join(got, ",") != strings.Join(tt.rules, ",") {
				t.Errorf("rules %v, want %v", got, tt.rules)
			}
		})
	}
	if got := e.reports(""); len(got) != 0 {
		t.Errorf("refused reports were stored: %+v", got)
	}
}

func TestReportAPI(t *testing.T) {
	e := reportEnv(t)
	r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": "broken", "reason": "crashes on start"})
	if r.Status != http.StatusCreated {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	var filed map[string]any
	r.json(t, &filed)
	if filed["state"] != "open" || filed["kind"] != "broken" || filed["id"] == nil {
		t.Errorf("answer = %v", filed)
	}
	if _, ok := filed["reporter_hash"]; ok || bytes.Contains(r.Body, []byte("crashes")) {
		t.Errorf("the public answer carries the reporter hash or the reason: %s", r.Body)
	}
	refusals := []struct {
		name, path, contentType string
		body                    string
		header                  []string
		status                  int
		rule                    string
	}{
		{"unknown package", "/api/v1/plugins/acme-nobody/reports", "application/json", `{"kind":"broken","reason":"x"}`, nil, http.StatusNotFound, "report.package.unknown"},
		{"unknown version", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"broken","reason":"x","version":"2.0.0"}`, nil, http.StatusNotFound, "report.version.unknown"},
		{"unknown kind", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"spam","reason":"x"}`, nil, http.StatusUnprocessableEntity, "report.kind"},
		{"reason over 4 KiB", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"other","reason":"` + strings.Repeat("x", ingest.MaxReportReason+1) + `"}`, nil, http.StatusUnprocessableEntity, "report.reason.length"},
		{"body over 8 KiB", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"other","reason":"` + strings.Repeat("x", ingest.MaxReportBody) + `"}`, nil, http.StatusRequestEntityTooLarge, "report.body.size"},
		{"not JSON", "/api/v1/plugins/acme-hello/reports", "text/plain", `{"kind":"broken","reason":"x"}`, nil, http.StatusBadRequest, "report.body.json"},
		{"a browser on another site", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"other","reason":"x"}`, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "report.origin"},
		{"the same report again", "/api/v1/plugins/acme-hello/reports", "application/json", `{"kind":"broken","reason":"still crashes"}`, nil, http.StatusConflict, "report.duplicate"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postRaw(tt.path, tt.contentType, []byte(tt.body), tt.header...)
			if r.Status != tt.status || !hasRule(t, r, tt.rule) {
				t.Errorf("%d %s, want %d with %s", r.Status, r.Body, tt.status, tt.rule)
			}
		})
	}
	if got := e.reports(""); len(got) != 1 {
		t.Errorf("reports stored = %+v, want only the first", got)
	}
}

// TestReportRateLimit: the eleventh report in a minute from one address is 429
// rate.report, refused reports count too, and the publish budget is not charged.
func TestReportRateLimit(t *testing.T) {
	e := reportEnv(t)
	for i := range 10 {
		r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": "other", "reason": "x", "version": fmt.Sprint(i)})
		if r.Status != http.StatusNotFound {
			t.Fatalf("report %d: %d %s, want 404 (an unknown version, still charged)", i, r.Status, r.Body)
		}
	}
	r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": "other", "reason": "x"})
	if r.Status != http.StatusTooManyRequests || !hasRule(t, r, "rate.report") || r.Header.Get("Retry-After") == "" {
		t.Fatalf("eleventh report: %d %s, want 429 rate.report with Retry-After", r.Status, r.Body)
	}
	form := e.postForm("/plugins/acme-hello/report", url.Values{"kind": {"other"}, "reason": {"x"}}, "Sec-Fetch-Site", "same-origin")
	if form.Status != http.StatusTooManyRequests {
		t.Errorf("the form shares the budget: %d", form.Status)
	}
	if p := e.publish(adminToken, "acme-hello-1.0.1.tar.gz", pkg(t, "acme-hello", "1.0.1", "x")); p.Status != http.StatusCreated {
		t.Errorf("publish after the report budget is spent: %d %s", p.Status, p.Body)
	}
}

// TestReporterAddressIsNotStored reads the database: the client's address (127.0.0.1) is
// in no column of the reports or audit tables; the hash is the keyed one.
func TestReporterAddressIsNotStored(t *testing.T) {
	e := reportEnv(t)
	if r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": "broken", "reason": "x"}); r.Status != http.StatusCreated {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	key, err := ingest.LoadReportKey(filepath.Join(e.dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	got := e.reports("")
	if len(got) != 1 || got[0].ReporterHash != ingest.HashReporter(key, "ip:127.0.0.1") {
		t.Fatalf("reports = %+v, want one hashed with the data directory's key", got)
	}
	db, err := sql.Open("sqlite", store.SQLiteURI(filepath.Join(e.dir, "data", store.DBFile))+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"reports", "audit"} {
		rows, err := db.Query("SELECT * FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if strings.Contains(v.String, "127.0.0.1") {
					t.Errorf("%s.%s holds the reporter's address: %q", table, cols[i], v.String)
				}
			}
		}
		if err := rows.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReportResolutionOnPage(t *testing.T) {
	e := reportEnv(t)
	for _, kind := range []string{"malicious", "broken"} {
		if r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": kind, "reason": "x", "version": "1.0.0"}); r.Status != http.StatusCreated {
			t.Fatalf("report: %d %s", r.Status, r.Body)
		}
	}
	open := e.reports("?open=true")
	if len(open) != 2 {
		t.Fatalf("open reports = %+v", open)
	}
	broken, malicious := open[0], open[1]
	resolve := func(id int64, body map[string]string) response {
		return e.post(fmt.Sprintf("/api/v1/admin/reports/%d/resolve", id), adminToken, body)
	}
	if r := resolve(broken.ID, map[string]string{"resolution": "works for us"}); r.Status != http.StatusOK {
		t.Fatalf("resolve with no action: %d %s", r.Status, r.Body)
	}
	page := e.get("/plugins/acme-hello")
	if bytes.Contains(page.Body, []byte(`data-testid="report-resolution"`)) {
		t.Error("a report resolved with no action is shown on the page")
	}
	if r := resolve(malicious.ID, map[string]string{"resolution": "confirmed <b>token theft</b>", "action": "yanked"}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	page = e.get("/plugins/acme-hello")
	notice := between(string(page.Body), `data-testid="report-resolution"`, "</div>")
	for _, want := range []string{"Reported as malicious", "version 1.0.0", `data-testid="report-action">yanked</strong>`, "confirmed &lt;b&gt;token theft&lt;/b&gt;"} {
		if !strings.Contains(notice, want) {
			t.Errorf("resolution notice lacks %q:\n%s", want, notice)
		}
	}
	if got := e.reports("?open=true"); len(got) != 0 {
		t.Errorf("open reports after resolving both: %+v", got)
	}
	audit := e.get("/api/v1/admin/audit?limit=1", "Authorization", "Bearer "+adminToken)
	if !bytes.Contains(audit.Body, []byte(`"action":"report_resolve"`)) || !bytes.Contains(audit.Body, []byte(`"action":"yanked"`)) {
		t.Errorf("audit: %s", audit.Body)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

func TestReportAdminRefusals(t *testing.T) {
	e := reportEnv(t)
	if r := e.post("/api/v1/plugins/acme-hello/reports", "", map[string]string{"kind": "broken", "reason": "x"}); r.Status != http.StatusCreated {
		t.Fatalf("report: %d %s", r.Status, r.Body)
	}
	id := e.reports("")[0].ID
	path := fmt.Sprintf("/api/v1/admin/reports/%d/resolve", id)
	if r := e.get("/api/v1/admin/reports"); r.Status != http.StatusUnauthorized {
		t.Errorf("list without a token: %d", r.Status)
	}
	if r := e.post(path, e.token("acme"), map[string]string{"resolution": "mine"}); r.Status != http.StatusForbidden {
		t.Errorf("resolve by the package's owner: %d %s, want 403 (admins only)", r.Status, r.Body)
	}
	tests := []struct {
		name, path string
		body       map[string]string
		status     int
		rule       string
	}{
		{"unknown action", path, map[string]string{"resolution": "x", "action": "deleted"}, http.StatusUnprocessableEntity, "report.action"},
		{"empty resolution", path, map[string]string{"resolution": "", "action": "none"}, http.StatusUnprocessableEntity, "report.resolution.missing"},
		{"resolution over 1 KiB", path, map[string]string{"resolution": strings.Repeat("x", ingest.MaxResolution+1)}, http.StatusUnprocessableEntity, "report.resolution.length"},
		{"two lines", path, map[string]string{"resolution": "a\nb"}, http.StatusUnprocessableEntity, "report.resolution.text"},
		{"unknown report", fmt.Sprintf("/api/v1/admin/reports/%d/resolve", id+50), map[string]string{"resolution": "x"}, http.StatusNotFound, "report.unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := e.post(tt.path, adminToken, tt.body); r.Status != tt.status || !hasRule(t, r, tt.rule) {
				t.Errorf("%d %s, want %d with %s", r.Status, r.Body, tt.status, tt.rule)
			}
		})
	}
	if r := e.post(path, adminToken, map[string]string{"resolution": "fixed in 1.0.1", "action": "none"}); r.Status != http.StatusOK {
		t.Fatalf("resolve: %d %s", r.Status, r.Body)
	}
	if r := e.post(path, adminToken, map[string]string{"resolution": "again"}); r.Status != http.StatusConflict || !hasRule(t, r, "report.resolved") {
		t.Errorf("resolve twice: %d %s, want 409 report.resolved", r.Status, r.Body)
	}
	var body struct {
		Reports []json.RawMessage `json:"reports"`
	}
	e.get("/api/v1/admin/reports?open=true", "Authorization", "Bearer "+adminToken).json(t, &body)
	if len(body.Reports) != 0 {
		t.Errorf("open reports after resolving: %s", body.Reports)
	}
}
