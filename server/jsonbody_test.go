package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// adminRaw posts body as application/json with the admin token.
func (e *env) adminRaw(path, body string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+adminToken)
	return e.do(req)
}

// TestJSONBodiesHoldOneObject: every JSON body the API reads is exactly one object: junk
// or a second object after it is refused (and nothing is changed), a field of the wrong
// type is named with the type it must be, a body over its limit is 413 naming the limit,
// and no refusal shows a Go type name.
func TestJSONBodiesHoldOneObject(t *testing.T) {
	e := newEnv(t, "")
	e.publishVersion("acme-hello", "1.0.0")
	const yank = "/api/v1/plugins/acme-hello/versions/1.0.0/yank"
	tests := []struct {
		name, path, body string
		status           int
		want             string
	}{
		{"yank with junk after the object", yank, `{"reason":"a"} junk`, 400, "one object and nothing after it"},
		{"yank with a second object", yank, `{"reason":"a"}{"reason":"b"}`, 400, "one object and nothing after it"},
		{"yank with a reason of the wrong type", yank, `{"reason":["a"]}`, 400, `field "reason" must be a string, found an array`},
		{"yank with an array body", yank, `[{"reason":"a"}]`, 400, "the body must be a JSON object, found an array"},
		{"yank over the limit", yank, `{"reason":"` + strings.Repeat("a", 70<<10) + `"}`, 413, "64 KiB (65536 bytes)"},
		{"deprecate with junk", "/api/v1/plugins/acme-hello/deprecate", `{"reason":"old"} x`, 400, "one object and nothing after it"},
		{"report with junk", "/api/v1/plugins/acme-hello/reports", `{"kind":"broken","reason":"x"} junk`, 400, "one object and nothing after it"},
		{"report with a reason of the wrong type", "/api/v1/plugins/acme-hello/reports", `{"kind":"broken","reason":["x"]}`, 400, `field "reason" must be a string, found an array`},
		{"report as an array", "/api/v1/plugins/acme-hello/reports", `[1]`, 400, "the body must be a JSON object, found an array"},
		{"resolve with junk", "/api/v1/admin/reports/1/resolve", `{"resolution":"x"} junk`, 400, "one object and nothing after it"},
		{"resolve over the limit", "/api/v1/admin/reports/1/resolve", `{"resolution":"` + strings.Repeat("a", 9<<10) + `"}`, 413, "8 KiB (8192 bytes)"},
		{"compat with junk", "/api/v1/admin/compat/acme-hello/versions/1.0.0", `{"max_kandev":"0.95.0","reason":"x"} junk`, 400, "one object and nothing after it"},
		{"compat with a number", "/api/v1/admin/compat/acme-hello/versions/1.0.0", `{"max_kandev":1,"reason":"x"}`, 400, `field "max_kandev" must be a string, found a number`},
		{"compat with an unknown field", "/api/v1/admin/compat/acme-hello/versions/1.0.0", `{"max":"1"}`, 400, `unknown field "max"`},
		{"quarantine with junk", "/api/v1/admin/quarantine/acme-hello", `{"reason":"mines coins"} junk`, 400, "one object and nothing after it"},
		{"quarantine with a second object", "/api/v1/admin/quarantine/acme-hello", `{"reason":"a"}{}`, 400, "one object and nothing after it"},
		{"blocklist with junk", "/api/v1/admin/blocklist", `{"sha256":"` + strings.Repeat("a", 64) + `","reason":"x"} junk`, 400, "one object and nothing after it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.adminRaw(tt.path, tt.body)
			var body apiErr
			r.json(t, &body)
			if r.Status != tt.status || !strings.Contains(body.Error, tt.want) {
				t.Errorf("%d %.300s, want %d saying %q", r.Status, r.Body, tt.status, tt.want)
			}
			for _, leak := range []string{"Go value", "Go struct", "server.", "json:"} {
				if bytes.Contains(r.Body, []byte(leak)) {
					t.Errorf("the refusal shows %q: %.300s", leak, r.Body)
				}
			}
		})
	}
	var v struct {
		Yanked bool `json:"yanked"`
	}
	if e.get("/api/v1/plugins/acme-hello/versions/1.0.0").json(t, &v); v.Yanked {
		t.Error("a refused yank body yanked the version")
	}
	if r := e.adminRaw(yank, `{"reason":"a"}`+"\n"); r.Status != http.StatusOK {
		t.Errorf("one object and a line break: %d %s", r.Status, r.Body)
	}
}
