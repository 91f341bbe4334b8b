package verify_test

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/problem"
	"github.com/pluginyard/registry/verify"
)

// symlinkBomb is a valid plugin followed by n symbolic links, each refused on its own.
func symlinkBomb(tb testing.TB, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		tb.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for _, en := range validPlugin(tb) {
		if err := tw.WriteHeader(header(en)); err != nil {
			tb.Fatal(err)
		}
		if _, err := tw.Write([]byte(en.Body)); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range n {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("l/%07d", i), Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestProblemListIsCapped checks that a package with 200 000 refused entries draws a
// report of at most MaxListed problems plus a summary, small once JSON-encoded, that still
// names the rule and how many were left out.
func TestProblemListIsCapped(t *testing.T) {
	const n = 200_000
	data := symlinkBomb(t, n)
	rep := mustPackage(t, data, verify.Options{})
	body, err := json.Marshal(rep.Problems)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d-byte upload, %d problems listed, %d bytes of JSON", len(data), len(rep.Problems), len(body))
	if len(rep.Problems) > problem.MaxListed+5 {
		t.Errorf("%d problems listed; want at most %d plus one summary per rule", len(rep.Problems), problem.MaxListed)
	}
	if len(body) > 256<<10 {
		t.Errorf("the problems are %d bytes of JSON; want under 256 KiB", len(body))
	}
	last := rep.Problems[len(rep.Problems)-1]
	if want := fmt.Sprintf("and %d more of rule archive.symlink", n-problem.MaxListed); last.Rule != "archive.symlink" || !strings.Contains(last.Message, want) {
		t.Errorf("last problem %v; want a summary saying %q", last, want)
	}
	if rep.OK() {
		t.Error("accepted")
	}
}

// TestLongNamesAreClipped checks that names quoted from a package cannot make a report
// large: a 64 KiB PAX path is refused by length and clipped in the report.
func TestLongNamesAreClipped(t *testing.T) {
	long := "docs/" + strings.Repeat("n", 64<<10)
	rep := mustPackage(t, buildTarGz(t, plus(t, file(long, "x"))), verify.Options{})
	if !rep.Problems.Has("archive.path.length") {
		t.Fatalf("want archive.path.length, got %v", rep.Problems)
	}
	for _, p := range rep.Problems {
		if len(p.File) > problem.MaxFieldLen || len(p.Message) > problem.MaxFieldLen {
			t.Errorf("problem %s has a %d-byte File and a %d-byte Message; want at most %d", p.Rule, len(p.File), len(p.Message), problem.MaxFieldLen)
		}
	}
}

// TestInspectionProblemsAreCapped checks that the cap covers the problems found after
// reading too (here 300 files missing from checksums.txt), not only the archive's own.
func TestInspectionProblemsAreCapped(t *testing.T) {
	extra := make([]entry, 300)
	for i := range extra {
		extra[i] = file(fmt.Sprintf("docs/%03d.md", i), "x")
	}
	rep := mustPackage(t, buildTarGz(t, plus(t, extra...)), verify.Options{})
	last := rep.Problems[len(rep.Problems)-1]
	if len(rep.Problems) != problem.MaxListed+1 || last.Rule != "checksums.unlisted" || !strings.Contains(last.Message, "and 200 more") {
		t.Errorf("%d problems, last %v; want %d and a summary of 200 more checksums.unlisted", len(rep.Problems), last, problem.MaxListed)
	}
}
