package e2e_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a skipFataler that records, instead of ending the test.
type recorder struct {
	skipped, failed string
}

func (r *recorder) Helper()           {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

func TestRequireChromium(t *testing.T) {
	type want struct {
		Path    string
		Skipped bool
		Failed  bool
		Says    string // a part of the skip or failure message
	}
	tests := []struct {
		name  string
		env   map[string]string
		path  map[string]string // lookPath results
		files []string
		want  want
	}{
		{"CHROMIUM_PATH wins", map[string]string{"CHROMIUM_PATH": "/opt/chrome/chrome"},
			map[string]string{"chromium": "/usr/bin/chromium"}, []string{"/opt/chrome/chrome", "/usr/bin/chromium"},
			want{Path: "/opt/chrome/chrome"}},
		{"CHROMIUM_PATH names no file", map[string]string{"CHROMIUM_PATH": "/nope"},
			map[string]string{"chromium": "/usr/bin/chromium"}, []string{"/usr/bin/chromium"},
			want{Failed: true, Says: "CHROMIUM_PATH=/nope"}},
		{"chromium on PATH", nil, map[string]string{"chromium": "/usr/local/bin/chromium"}, nil,
			want{Path: "/usr/local/bin/chromium"}},
		{"chromium-browser on PATH", nil, map[string]string{"chromium-browser": "/usr/bin/chromium-browser"}, nil,
			want{Path: "/usr/bin/chromium-browser"}},
		{"Debian path off PATH", nil, nil, []string{"/usr/bin/chromium"}, want{Path: "/usr/bin/chromium"}},
		{"absent locally skips", nil, nil, nil,
			want{Skipped: true, Says: "chromium not found: apt-get install chromium, or set CHROMIUM_PATH"}},
		{"absent under CI fails", map[string]string{"CI": "true"}, nil, nil,
			want{Failed: true, Says: "chromium not found"}},
		{"CI other than true skips", map[string]string{"CI": "1"}, nil, nil,
			want{Skipped: true, Says: "chromium not found"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := host{
				getenv: func(k string) string { return tc.env[k] },
				lookPath: func(name string) (string, error) {
					if p, ok := tc.path[name]; ok {
						return p, nil
					}
					return "", errors.New("not found")
				},
				isFile: func(p string) bool {
					for _, f := range tc.files {
						if f == p {
							return true
						}
					}
					return false
				},
			}
			var r recorder
			got := want{Path: requireChromium(&r, h), Skipped: r.skipped != "", Failed: r.failed != ""}
			if msg := r.skipped + r.failed; strings.Contains(msg, tc.want.Says) {
				got.Says = tc.want.Says
			} else {
				got.Says = msg
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requireChromium (-want +got):\n%s", diff)
			}
		})
	}
}
