package pull_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/pull"
)

func TestDownloadPolicy(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 100)
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sized":
			_, _ = w.Write(payload) // Content-Length is set for small bodies
		case "/streamed":
			w.(http.Flusher).Flush() // no Content-Length: the cap must count bytes
			_, _ = w.Write(payload)
		case "/hop":
			http.Redirect(w, r, "/sized", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			if r.Header.Get("Authorization") != "" {
				t.Errorf("a download carried Authorization %q", r.Header.Get("Authorization"))
			}
			http.NotFound(w, r)
		}
	}))
	defer files.Close()
	plain, err := pull.NewClient(pull.ClientConfig{API: files.URL, Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	tlsAPI, err := pull.NewClient(pull.ClientConfig{API: "https://api.github.invalid", Token: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		client  *pull.Client
		url     string
		limit   int64
		wantN   int
		wantErr string
	}{
		{"within the cap", plain, files.URL + "/sized", 100, 100, ""},
		{"redirect followed", plain, files.URL + "/hop", 100, 100, ""},
		{"declared size over the cap", plain, files.URL + "/sized", 99, 0, "larger than the 99-byte limit"},
		{"streamed size over the cap", plain, files.URL + "/streamed", 99, 0, "larger than the 99-byte limit"},
		{"redirect loop", plain, files.URL + "/loop", 100, 0, "more than 5 redirects"},
		{"not found", plain, files.URL + "/missing", 100, 0, "404"},
		{"plain http while the API is https", tlsAPI, files.URL + "/sized", 100, 0, "plain http while the API is https"},
		{"credentials in the URL", plain, strings.Replace(files.URL, "://", "://u:p@", 1) + "/sized", 100, 0, "without credentials"},
		{"not http", plain, "file:///etc/passwd", 100, 0, "expected an absolute http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := tt.client.Download(context.Background(), tt.url, &buf, tt.limit)
			if tt.wantErr == "" {
				if err != nil || buf.Len() != tt.wantN {
					t.Fatalf("got %d bytes, %v; want %d bytes", buf.Len(), err, tt.wantN)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestDownloadHosts: assets come only from the download hosts, checked on the first URL
// and on every redirect; a refusal names the host and the setting.
func TestDownloadHosts(t *testing.T) {
	payload := bytes.Repeat([]byte("y"), 10)
	var reached atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		_, _ = w.Write(payload)
	}))
	defer elsewhere.Close()
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, elsewhere.URL+"/internal", http.StatusFound)
		case "/two-hops":
			http.Redirect(w, r, "/away", http.StatusFound)
		default:
			_, _ = w.Write(payload)
		}
	}))
	defer files.Close()
	host := func(u string) string { return strings.TrimPrefix(u, "http://") }
	client := func(hosts ...string) *pull.Client {
		c, err := pull.NewClient(pull.ClientConfig{API: files.URL, DownloadHosts: hosts})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	github, err := pull.NewClient(pull.ClientConfig{API: "https://api.github.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	refusedElsewhere := `download from host "` + host(elsewhere.URL) + `" refused`
	tests := []struct {
		name    string
		client  *pull.Client
		url     string
		wantErr string
	}{
		{"the API host by default", client(), files.URL + "/asset", ""},
		{"first URL on another host", client(), elsewhere.URL + "/internal", refusedElsewhere},
		{"redirect to another host", client(), files.URL + "/away", refusedElsewhere},
		{"second redirect to another host", client(), files.URL + "/two-hops", refusedElsewhere},
		{"refusal names the setting", client(), elsewhere.URL + "/internal", "add the host to " + pull.DownloadHostsSetting},
		{"configured host allowed after a redirect", client(host(files.URL), host(elsewhere.URL)), files.URL + "/away", ""},
		{"configured list replaces the default", client(host(elsewhere.URL)), files.URL + "/asset", `download from host "` + host(files.URL) + `" refused`},
		{"a host without port is that host on the default port only", client("127.0.0.1"), files.URL + "/asset", "refused"},
		{"GitHub's asset hosts by default", github, "https://internal.example/metadata",
			`download from host "internal.example" refused (https://internal.example/metadata): it is not among the download hosts ` +
				"[api.github.invalid, github.com, objects.githubusercontent.com, release-assets.githubusercontent.com]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached.Store(0)
			var buf bytes.Buffer
			_, err := tt.client.Download(context.Background(), tt.url, &buf, 100)
			if tt.wantErr == "" {
				if err != nil || !bytes.Equal(buf.Bytes(), payload) {
					t.Fatalf("got %q, %v; want the payload", buf.Bytes(), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
			if n := reached.Load(); n != 0 {
				t.Errorf("the refused host was contacted %d times", n)
			}
		})
	}
}

func TestAPIStaysOnTheBase(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the client followed an API redirect to another host: %s", r.URL)
	}))
	defer elsewhere.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusMovedPermanently)
	}))
	defer api.Close()
	c, err := pull.NewClient(pull.ClientConfig{API: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = c.Repository(context.Background(), "acme/x", "")
	if err == nil || !strings.Contains(err.Error(), "only "+strings.TrimPrefix(api.URL, "http://")+" is contacted") {
		t.Errorf("error %v, want the redirect refused", err)
	}
}

func TestNewClientRefusesBadBase(t *testing.T) {
	for _, base := range []string{"ftp://api.github.com", "api.github.com", "https://user:pw@api.github.com", "https://"} {
		if _, err := pull.NewClient(pull.ClientConfig{API: base}); err == nil {
			t.Errorf("NewClient(%q) accepted", base)
		}
	}
}

func TestRateLimitErrorStopsLaterCalls(t *testing.T) {
	calls := map[string]int{}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls[r.URL.Path]++
		// The last request of the quota succeeds and says so.
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "4102444800") // 2100-01-01
		_, _ = w.Write([]byte(`{"id": 1, "full_name": "acme/x", "owner": {"id": 2}}`))
	}))
	defer api.Close()
	c, err := pull.NewClient(pull.ClientConfig{API: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 9, 18, 6, 0, 0, 0, time.UTC)
	pull.SetClientNow(c, func() time.Time { return now })
	if _, _, _, err := c.Repository(context.Background(), "acme/x", ""); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = c.LatestRelease(context.Background(), "Acme/x", "")
	var rl *pull.RateLimitError
	if !errors.As(err, &rl) || !rl.Until.Equal(now.Add(pull.MaxRateLimitDelay)) {
		t.Errorf("second call: %v, want a rate limit until %v (2100-01-01 capped at an hour)", err, now.Add(pull.MaxRateLimitDelay))
	}
	if _, _, _, err := c.Repository(context.Background(), "acme/y", ""); err != nil {
		t.Errorf("another repository: %v, want it asked (its own quota answer decides)", err)
	}
	want := map[string]int{"/repos/acme/x": 1, "/repos/acme/y": 1}
	if diff := cmp.Diff(want, calls); diff != "" {
		t.Errorf("requests (-want +got):\n%s\nan exhausted repository is not asked again; the others are", diff)
	}
}

func TestParseChecksums(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("B", 64)
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"sha256sum text mode", a + "  pkg-1.0.0.tar.gz\n", map[string]string{"pkg-1.0.0.tar.gz": a}},
		{"binary mode, folder, CRLF, upper case", b + " *dist/pkg-1.0.0.tar.gz\r\n", map[string]string{"pkg-1.0.0.tar.gz": strings.ToLower(b)}},
		{"package-internal list", a + "  manifest.yaml\n" + a + "  server/plugin-linux-amd64\n",
			map[string]string{"manifest.yaml": a, "plugin-linux-amd64": a}},
		{"other lines ignored", "# sums\nSHA256 (x) = " + a + "\n" + a[:63] + "  short\nzz" + a[2:] + "  nothex\n" + a + "\n", map[string]string{}},
		{"empty", "", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, pull.ParseChecksums([]byte(tt.in))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseChecksums(f *testing.F) {
	f.Add([]byte(strings.Repeat("a", 64) + "  pkg-1.0.0.tar.gz\n"))
	f.Add([]byte(strings.Repeat("0", 64) + " */\n" + strings.Repeat("f", 64) + "  ../x\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, sum := range pull.ParseChecksums(data) {
			if len(sum) != 64 || strings.ToLower(sum) != sum || name == "" || strings.Contains(name, "/") {
				t.Errorf("entry %q → %q", name, sum)
			}
		}
	})
}
