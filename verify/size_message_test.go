package verify_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

func TestFormatSize(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{240, "240 bytes"},
		{1023, "1023 bytes"},
		{64 << 10, "64 KiB"},
		{12_800, "12.5 KiB (12 800 bytes)"},
		{1 << 20, "1 MiB"},
		{10 << 20, "10 MiB"},
		{6_502_400, "6.2 MiB (6 502 400 bytes)"},
		{110_000_000, "104.9 MiB (110 000 000 bytes)"},
		{1<<20 + 1, "1.0 MiB (1 048 577 bytes)"},
	}
	for _, tt := range tests {
		if got := verify.FormatSize(tt.n); got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

// TestLimitMessagesNameTheKind checks that a limit a canvas passes over says, in one unit
// style, what was found and what a canvas may be.
func TestLimitMessagesNameTheKind(t *testing.T) {
	canvas := func(extra ...entry) []entry { return withChecksums("", append(validCanvas(t)[:5], extra...)...) }
	tests := []struct {
		name    string
		entries []entry
		opt     verify.Options
		rule    string
		file    string
		want    string
	}{
		{"canvas file", canvas(file("ui/big.js", strings.Repeat("z", 6_502_400))), verify.Options{},
			"archive.limit.file", "ui/big.js", "the file is 6.2 MiB (6 502 400 bytes); a canvas package may hold files of at most 5 MiB each"},
		{"canvas compressed", validCanvas(t), verify.Options{Canvas: func() verify.Limits { l := verify.CanvasLimits(); l.MaxCompressed = 1000; return l }()},
			"archive.limit.compressed", "", "; a canvas package may be at most 1000 bytes compressed"},
		{"canvas total", canvas(file("ui/a.js", strings.Repeat("a", 5<<20)), file("ui/b.js", strings.Repeat("b", 5<<20)),
			file("ui/c.js", strings.Repeat("c", 5<<20)), file("ui/d.js", strings.Repeat("d", 5<<20)), file("ui/e.js", strings.Repeat("e", 5<<20))), verify.Options{},
			"archive.limit.total", "", " decompressed; a canvas package may hold at most 25 MiB decompressed"},
		{"plugin compressed", validPlugin(t), verify.Options{Plugin: func() verify.Limits { l := verify.PluginLimits(); l.MaxCompressed = 100; return l }()},
			"archive.limit.compressed", "", "; a plugin package may be at most 100 bytes compressed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), tt.opt)
			p, ok := findRule(rep.Problems, tt.rule, tt.file)
			if !ok {
				t.Fatalf("no %s problem on %q: %v", tt.rule, tt.file, rep.Problems)
			}
			if !strings.Contains(p.Message, tt.want) {
				t.Errorf("message %q does not contain %q", p.Message, tt.want)
			}
		})
	}
}

func findRule(l problem.List, rule, file string) (problem.Problem, bool) {
	for _, p := range l {
		if p.Rule == rule && p.File == file {
			return p, true
		}
	}
	return problem.Problem{}, false
}

// TestCompressedMessageIsExact checks the measured size against the package's real length.
func TestCompressedMessageIsExact(t *testing.T) {
	data := buildTarGz(t, validCanvas(t))
	opt := verify.Options{Canvas: func() verify.Limits { l := verify.CanvasLimits(); l.MaxCompressed = 1000; return l }()}
	rep := mustPackage(t, data, opt)
	p, ok := findRule(rep.Problems, "archive.limit.compressed", "")
	if !ok {
		t.Fatalf("no archive.limit.compressed: %v", rep.Problems)
	}
	want := "the package is " + verify.FormatSize(int64(len(data))) + " compressed; a canvas package may be at most 1000 bytes compressed"
	if diff := cmp.Diff(want, p.Message); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
}
