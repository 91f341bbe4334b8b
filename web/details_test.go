package web_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/web"
)

func TestPlatformLabel(t *testing.T) {
	for key, want := range map[string]string{
		"linux-amd64": "Linux x86-64", "linux-arm64": "Linux Arm64", "darwin-arm64": "macOS Apple silicon",
		"darwin-amd64": "macOS Intel", "windows-amd64": "Windows x86-64", "windows-386": "Windows x86 (32-bit)",
		"freebsd-riscv64": "FreeBSD RISC-V 64-bit", "linux-sparc": "linux-sparc", "amiga": "amiga", "plan9-arm": "Plan 9 Arm (32-bit)",
	} {
		if got := web.PlatformLabel(key); got != want {
			t.Errorf("PlatformLabel(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestNativeRunsOnMissing(t *testing.T) {
	tests := []struct {
		name    string
		keys    []string
		order   []string
		missing []string
	}{
		{"every common platform", []string{"windows-amd64", "darwin-arm64", "darwin-amd64", "linux-arm64", "linux-amd64"},
			[]string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64", "windows-amd64"}, nil},
		{"macOS Intel only", []string{"darwin-amd64"}, []string{"darwin-amd64"}, []string{
			"No Linux build: this plugin will not run on Linux.",
			"No Windows build: this plugin will not run on Windows.",
			"No macOS Apple silicon build: on Apple silicon Macs it runs only through Rosetta 2.",
		}},
		{"Linux Arm64 and Windows Arm64", []string{"windows-arm64", "linux-arm64", "freebsd-amd64"}, []string{"linux-arm64", "windows-arm64", "freebsd-amd64"}, []string{
			"No macOS build: this plugin will not run on macOS.",
			"No Linux x86-64 build: it will not run on x86-64 Linux (most PCs and servers).",
			"No Windows x86-64 build: it will not run on most Windows PCs.",
		}},
		{"Apple silicon only", []string{"darwin-arm64", "linux-amd64", "linux-arm64", "windows-amd64"}, []string{"linux-amd64", "linux-arm64", "darwin-arm64", "windows-amd64"},
			[]string{"No macOS Intel build: it will not run on Intel Macs."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := web.NativeRunsOn(tt.keys)
			var order []string
			for _, p := range r.Platforms {
				order = append(order, p.Key)
			}
			if diff := cmp.Diff(tt.order, order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.missing, r.Missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLaunchRunsOn(t *testing.T) {
	if got := web.LaunchRunsOn("python").Summary; got != "Python 3: any system with python3 installed." {
		t.Errorf("python: %q", got)
	}
	if got := web.LaunchRunsOn("deno").Summary; got != "Launch type deno: see the extension's README for what it needs." {
		t.Errorf("unknown type: %q", got)
	}
}

func TestSettingsFor(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"token":   map[string]any{"type": "string", "format": "password", "title": "API token"},
			"retries": map[string]any{"type": "integer", "default": 3, "description": "How often to retry"},
			"profile": map[string]any{"type": "string", "format": "agent-profile"},
			"tags":    map[string]any{"default": []any{"a", "b"}},
			"odd":     "not a mapping",
		},
		"required": []any{"token", 7},
	}
	want := []web.Setting{
		{Name: "token", Title: "API token", Type: "string", Format: "password", Secret: true, Required: true},
		{Name: "odd"},
		{Name: "profile", Type: "string", Format: "agent-profile"},
		{Name: "retries", Type: "integer", Default: "3", Description: "How often to retry"},
		{Name: "tags", Default: `["a","b"]`},
	}
	if diff := cmp.Diff(want, web.SettingsFor(schema)); diff != "" {
		t.Errorf("SettingsFor (-want +got):\n%s", diff)
	}
	if got := web.SettingsFor(nil); len(got) != 0 {
		t.Errorf("no schema: %v", got)
	}
}

func TestNewDownloadChart(t *testing.T) {
	today := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	c := web.NewDownloadChart([]web.DayCount{{"2026-12-01", 4}, {"2026-11-30", 2}, {"2026-11-01", 9}, {"2026-10-31", 50}, {"2026-12-02", 7}}, today, web.ChartShort)
	if c.From != "2026-11-02" || c.To != "2026-12-01" || len(c.Bars) != 30 || c.Total != 6 {
		t.Fatalf("window %s..%s, %d bars, total %d; want 2026-11-02..2026-12-01, 30, 6 (days outside ignored)", c.From, c.To, len(c.Bars), c.Total)
	}
	last, prev := c.Bars[29], c.Bars[28]
	if last.Day != "2026-12-01" || last.Height != 60 || last.Y != 0 || prev.Height != 30 || prev.Y != 30 || c.Bars[0].Height != 0 {
		t.Errorf("bars: last %+v, previous %+v, first %+v", last, prev, c.Bars[0])
	}
	if last.X != 29*8 {
		t.Errorf("last bar at x=%d, want %d", last.X, 29*8)
	}
	if got := c.Summary(); got != "6 downloads in the last 30 days (2026-11-02 to 2026-12-01); the busiest day was 2026-12-01, with 4 downloads." {
		t.Errorf("summary %q", got)
	}
	long := web.NewDownloadChart([]web.DayCount{{"2026-11-01", 1}, {"2026-10-31", 1000}}, today, web.ChartLong)
	if long.Total != 1001 || long.Peak.Day != "2026-10-31" || long.OtherDays != web.ChartShort || long.Bars[0].Day != "2026-09-03" {
		t.Errorf("90 days: total %d, peak %+v, other %d, first %s", long.Total, long.Peak, long.OtherDays, long.Bars[0].Day)
	}
	if small := long.Bars[len(long.Bars)-31]; small.Day != "2026-11-01" || small.Height != 1 {
		t.Errorf("a day far below the peak: %+v, want a visible 1-unit bar", small)
	}
	if got := long.Summary(); got != "1,001 downloads in the last 90 days (2026-09-03 to 2026-12-01); the busiest day was 2026-10-31, with 1,000 downloads." {
		t.Errorf("summary %q", got)
	}
	none := web.NewDownloadChart(nil, today, web.ChartShort)
	if got := none.Summary(); got != "No downloads in the last 30 days (2026-11-02 to 2026-12-01)." {
		t.Errorf("summary %q", got)
	}
}

// BenchmarkPluginPageDetails renders a plugin page with n versions (the newest 20 with
// notes, as the server loads them), 12 settings and a 90-day chart: the cost grows with the
// versions table only.
func BenchmarkPluginPageDetails(b *testing.B) {
	notes := web.StoredChangelog([]byte(strings.Repeat("<ul>\n<li>A fix with <code>code</code>.</li>\n</ul>\n", 20)))
	var counts []web.DayCount
	today := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range 90 {
		counts = append(counts, web.DayCount{Day: today.AddDate(0, 0, -i).Format(time.DateOnly), Downloads: int64(i%7 + 1)})
	}
	props := map[string]any{}
	for i := range 12 {
		props[fmt.Sprintf("field_%02d", i)] = map[string]any{"type": "string", "default": "x", "description": "A field."}
	}
	for _, n := range []int{1, 20, 100, 1000} {
		p := web.PluginPage{Card: web.Card{ID: "acme", Kind: web.KindPlugin, Name: "Acme", URL: "/plugins/acme"},
			RunsOn: web.NativeRunsOn([]string{"linux-amd64", "darwin-arm64"}), Settings: web.SettingsFor(map[string]any{"properties": props}),
			Downloads: web.NewDownloadChart(counts, today, web.ChartLong)}
		for i := range n {
			row := web.VersionRow{Version: fmt.Sprintf("1.%d.0", n-i), CreatedAt: "2026-11-01", Size: 1000, SHA256: strings.Repeat("a", 64)}
			if i < 20 {
				row.NotesHTML = notes
			}
			p.Versions = append(p.Versions, row)
		}
		b.Run(fmt.Sprintf("%d_versions", n), func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := web.Plugin(p).Render(context.Background(), &buf); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(buf.Len()))
		})
	}
}
