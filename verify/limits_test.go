package verify_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/verify"
)

func TestLimits(t *testing.T) {
	many := func(n int, prefix string) []entry {
		var out []entry
		for i := range n {
			out = append(out, file(fmt.Sprintf("%sf%03d", prefix, i), "x"))
		}
		return out
	}
	canvasWith := func(extra ...entry) []entry {
		return withChecksums("", append(validCanvas(t)[:5], extra...)...)
	}
	tests := []struct {
		name    string
		entries []entry
		opt     verify.Options
		want    []finding
	}{
		{"compressed size", validPlugin(t), small(func(l *verify.Limits) { l.MaxCompressed = 300 }), []finding{e("archive.limit.compressed", "")}},
		{"file size from the header", plus(t, file("server/big", strings.Repeat("z", 5000))), small(func(l *verify.Limits) { l.MaxFileSize = 4096 }), []finding{e("archive.limit.file", "server/big")}},
		{"header claiming 1 GiB", plus(t, entry{Name: "server/huge", Size: 1 << 30}), verify.Options{}, []finding{e("archive.limit.file", "server/huge")}},
		{"total size", plus(t, file("a.bin", strings.Repeat("z", 3000)), file("b.bin", strings.Repeat("z", 3000))), small(func(l *verify.Limits) { l.MaxTotalSize = 5000 }), []finding{e("archive.limit.total", "b.bin")}},
		{"file count", plus(t, many(20, "docs/")...), small(func(l *verify.Limits) { l.MaxFiles = 10 }), []finding{e("archive.limit.files", "docs/f005")}},
		{"directory count", plus(t, dir("a/"), dir("b/"), dir("c/"), dir("d/"), dir("e/"), dir("f/"), dir("g/"), dir("h/")), small(func(l *verify.Limits) { l.MaxFiles = 7 }), []finding{e("archive.limit.files", "h/")}},
		{"path length", plus(t, file("docs/"+strings.Repeat("p", 60)+".md", "x")), small(func(l *verify.Limits) { l.MaxPathLen = 40 }), []finding{e("archive.path.length", "docs/"+strings.Repeat("p", 60)+".md")}},
		{"canvas file size", canvasWith(file("ui/big.js", strings.Repeat("z", 6<<20))), verify.Options{}, []finding{e("archive.limit.file", "ui/big.js")}},
		{"canvas total size", canvasWith(file("ui/a.js", strings.Repeat("a", 5<<20)), file("ui/b.js", strings.Repeat("b", 5<<20)), file("ui/c.js", strings.Repeat("c", 5<<20)), file("ui/d.js", strings.Repeat("d", 5<<20)), file("ui/e.js", strings.Repeat("e", 5<<20))), verify.Options{}, []finding{e("archive.limit.total", "")}},
		{"canvas file count", canvasWith(many(520, "ui/f/")...), verify.Options{}, []finding{e("archive.limit.files", "")}},
		{"canvas path length", canvasWith(file("ui/"+strings.Repeat("p", 250)+".js", "x")), verify.Options{}, []finding{e("archive.path.length", "ui/"+strings.Repeat("p", 250)+".js")}},
		{"canvas manifest size", withChecksums("", append([]entry{file("manifest.yaml", canvasManifest+"#"+strings.Repeat("m", 70<<10)+"\n")}, validCanvas(t)[1:5]...)...), verify.Options{}, []finding{e("archive.limit.manifest", "manifest.yaml")}},
		{"canvas compressed size", validCanvas(t), verify.Options{Canvas: func() verify.Limits { l := verify.CanvasLimits(); l.MaxCompressed = 400; return l }()}, []finding{e("archive.limit.compressed", "")}},
		{"plugin may exceed canvas limits", plus(t, file("server/data.bin", strings.Repeat("z", 6<<20))), verify.Options{}, []finding{e("checksums.unlisted", "checksums.txt")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), tt.opt)
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
		})
	}
}

// TestGzipBomb checks that decompression stops at the limit on the bytes really
// decompressed, not on what headers claim, and without buffering: 256 MiB of zeros hidden
// after the tar end-of-archive marker, where no header counts them.
func TestGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(buildTar(t, validPlugin(t))); err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 256 {
		if _, err := zw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	opt := small(func(l *verify.Limits) { l.MaxTotalSize = 4 << 20; l.MaxFiles = 100 })

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := mustPackage(t, buf.Bytes(), opt)
	runtime.ReadMemStats(&after)

	if diff := cmp.Diff([]finding{e("archive.limit.total", "")}, ownFindings(rep.Problems), sortFindings); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("verifying the bomb allocated %d MiB; reading must stream", alloc>>20)
	}
}
