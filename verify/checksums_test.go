package verify_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

var (
	hexA = strings.Repeat("a", 64)
	hexB = strings.Repeat("b", 64)
)

func TestParseChecksums(t *testing.T) {
	type at struct{ Rule, Path string }
	tests := []struct {
		name  string
		data  string
		lines []verify.ChecksumLine
		probs []at
	}{
		{"empty", "", nil, nil},
		{"two sorted lines", hexA + "  README.md\n" + hexB + "  server/plugin\n",
			[]verify.ChecksumLine{{1, hexA, "README.md"}, {2, hexB, "server/plugin"}}, nil},
		{"path with spaces", hexA + "  docs/a  b.md\n", []verify.ChecksumLine{{1, hexA, "docs/a  b.md"}}, nil},
		{"no final newline", hexA + "  a\n" + hexB + "  b", []verify.ChecksumLine{{1, hexA, "a"}, {2, hexB, "b"}}, []at{{"checksums.format", "line 2"}}},
		{"CRLF", hexA + "  a\r\n", nil, []at{{"checksums.format", "line 1"}}},
		{"one space", hexA + " a\n", nil, []at{{"checksums.format", "line 1"}}},
		{"binary marker", hexA + " *a\n", nil, []at{{"checksums.format", "line 1"}}},
		{"star path", hexA + "  *a\n", nil, []at{{"checksums.path", "line 1"}}},
		{"uppercase hex", strings.ToUpper(hexA) + "  a\n", nil, []at{{"checksums.format", "line 1"}}},
		{"short digest", hexA[:63] + "  a\n", nil, []at{{"checksums.format", "line 1"}}},
		{"blank line", hexA + "  a\n\n", []verify.ChecksumLine{{1, hexA, "a"}}, []at{{"checksums.format", "line 2"}}},
		{"dot-slash path", hexA + "  ./a\n", nil, []at{{"checksums.path", "line 1"}}},
		{"absolute path", hexA + "  /a\n", nil, []at{{"checksums.path", "line 1"}}},
		{"dot-dot path", hexA + "  a/../b\n", nil, []at{{"checksums.path", "line 1"}}},
		{"backslash path", hexA + "  a\\b\n", nil, []at{{"checksums.path", "line 1"}}},
		{"empty path", hexA + "  \n", nil, []at{{"checksums.path", "line 1"}}},
		{"unsorted", hexA + "  b\n" + hexB + "  a\n", []verify.ChecksumLine{{1, hexA, "b"}, {2, hexB, "a"}}, []at{{"checksums.order", "line 2"}}},
		{"byte order, not case order", hexA + "  Z\n" + hexB + "  a\n", []verify.ChecksumLine{{1, hexA, "Z"}, {2, hexB, "a"}}, nil},
		{"duplicate", hexA + "  a\n" + hexB + "  a\n", []verify.ChecksumLine{{1, hexA, "a"}}, []at{{"checksums.duplicate", "line 2"}}},
		{"self entry", hexA + "  checksums.txt\n", nil, []at{{"checksums.self", "line 1"}}},
		{"signature entry", hexA + "  checksums.txt.sig\n", nil, []at{{"checksums.self", "line 1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines, probs := verify.ParseChecksums([]byte(tt.data))
			var got []at
			for _, p := range probs {
				got = append(got, at{p.Rule, p.Path})
				if p.Severity != problem.Error || p.Message == "" {
					t.Errorf("problem %+v: want an error with a message", p)
				}
			}
			if diff := cmp.Diff(tt.lines, lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.probs, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPackageChecksums(t *testing.T) {
	files := pluginFiles(t)
	good := contentOf(validPlugin(t), "checksums.txt")
	readmeLine := digest(contentOf(files, "README.md")) + "  README.md\n"
	with := func(sums string, extra ...entry) []entry {
		return append(append(append([]entry{}, files...), extra...), file("checksums.txt", sums))
	}
	tests := []struct {
		name    string
		entries []entry
		want    []finding
		path    string // the Path of the first problem
	}{
		{"missing", pluginFiles(t), []finding{e("checksums.missing", "checksums.txt")}, ""},
		{"mismatch", with(strings.Replace(good, readmeLine, hexA+"  README.md\n", 1)), []finding{e("checksums.mismatch", "checksums.txt")}, "README.md"},
		{"unlisted", with(good, file("ui/extra.js", "x")), []finding{e("checksums.unlisted", "checksums.txt")}, "ui/extra.js"},
		{"absent", with(good + hexA + "  zzz/gone.txt\n"), []finding{e("checksums.absent", "checksums.txt")}, "zzz/gone.txt"},
		// CRLF: every line fails the format, so every file is unlisted too.
		{"format", with(strings.ReplaceAll(good, "\n", "\r\n")), append(times(4, e("checksums.format", "checksums.txt")), times(4, e("checksums.unlisted", "checksums.txt"))...), "line 1"},
		{"order", with(strings.Join(reverse(strings.SplitAfter(good, "\n")), "")), times(3, e("checksums.order", "checksums.txt")), "line 2"},
		{"duplicate", with(readmeLine + good), []finding{e("checksums.duplicate", "checksums.txt")}, "line 2"},
		{"signature unlisted is fine", with(good, file("checksums.txt.sig", "sig")), nil, ""},
		{"self entry", with(good + hexA + "  checksums.txt\n"), []finding{e("checksums.self", "checksums.txt")}, "line 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), verify.Options{})
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Fatalf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
			if len(tt.want) > 0 && rep.Problems[0].Path != tt.path {
				t.Errorf("first problem Path = %q, want %q", rep.Problems[0].Path, tt.path)
			}
		})
	}
}

func TestExtensionChecksumsOptionalButChecked(t *testing.T) {
	bad := npmExtension()
	bad[len(bad)-1].Body = strings.Replace(bad[len(bad)-1].Body, digest("console.log('hi')\n"), hexA, 1)
	rep := mustPackage(t, buildTarGz(t, bad), verify.Options{})
	want := []finding{e("checksums.mismatch", "package/checksums.txt")}
	if diff := cmp.Diff(want, ownFindings(rep.Problems), sortFindings); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if rep.Problems[0].Path != "package/index.js" {
		t.Errorf("Path = %q, want package/index.js", rep.Problems[0].Path)
	}
}

func reverse(s []string) []string {
	out := make([]string, 0, len(s))
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != "" {
			out = append(out, s[i])
		}
	}
	return out
}

func times(n int, f finding) []finding {
	out := make([]finding, n)
	for i := range out {
		out[i] = f
	}
	return out
}
