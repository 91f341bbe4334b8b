package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pluginyard/registry/verify"
)

// BenchmarkPackage verifies a plugin held in memory: an 8 MiB executable of skewed random
// bytes (Huffman-coded by gzip, as machine code is) plus text files; bytes/s is of the
// compressed package.
func BenchmarkPackage(b *testing.B) {
	rng := rand.New(rand.NewChaCha8([32]byte{7}))
	bin := make([]byte, 8<<20)
	for i := range bin {
		bin[i] = byte(rng.Uint32()) & byte(rng.Uint32()>>8)
	}
	files := append(pluginFiles(b), file("server/plugin-linux-arm64", string(bin)))
	for i := range 20 {
		files = append(files, file("ui/chunk-"+string(rune('a'+i))+".js", string(bytes.Repeat([]byte("export const x = () => 1;\n"), 2000))))
	}
	data := buildTarGz(b, withChecksums("", files...))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		rep, err := verify.Package(context.Background(), bytes.NewReader(data), verify.Options{})
		if err != nil || !rep.OK() {
			b.Fatalf("err %v, problems %v", err, rep.Problems)
		}
	}
}

// checksumsOf returns a sorted checksums.txt of n lines and the package files it lists.
func checksumsOf(n int) ([]byte, []entry) {
	var b strings.Builder
	files := make([]entry, 0, n)
	for i := range n {
		name := fmt.Sprintf("docs/%07d.md", i)
		files = append(files, file(name, name))
		b.WriteString(digest(name) + "  " + name + "\n")
	}
	return []byte(b.String()), files
}

// BenchmarkParseChecksums parses checksums.txt of 10^3 to 10^5 lines: the cost per line
// must stay flat (duplicates and order are checked with a map and the previous line).
func BenchmarkParseChecksums(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		data, _ := checksumsOf(n)
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if lines, probs := verify.ParseChecksums(data); len(lines) != n || len(probs) != 0 {
					b.Fatalf("%d lines, problems %v", len(lines), probs)
				}
			}
		})
	}
}

// BenchmarkReadArchiveEntries verifies packages of 1 000 to 100 000 small files listed in
// checksums.txt (the file limit raised to fit): reading, name checks, collision keys and
// checksum comparison must grow linearly with the entry count.
func BenchmarkReadArchiveEntries(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 30_000, 100_000} {
		_, files := checksumsOf(n)
		data := buildTarGz(b, withChecksums("", append(pluginFiles(b), files...)...))
		lim := verify.PluginLimits()
		lim.MaxFiles = n + 10
		opt := verify.Options{Plugin: lim, Canvas: verify.CanvasLimits()}
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				rep, err := verify.Package(context.Background(), bytes.NewReader(data), opt)
				if err != nil || !rep.OK() {
					b.Fatalf("err %v, problems %v", err, rep.Problems)
				}
			}
		})
	}
}

// BenchmarkRefusedEntries reads packages of 10 000 to 200 000 refused symbolic links: the
// capped problem list keeps the cost per entry flat and memory bounded.
func BenchmarkRefusedEntries(b *testing.B) {
	for _, n := range []int{10_000, 50_000, 200_000} {
		data := symlinkBomb(b, n)
		b.Run(fmt.Sprintf("symlinks=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if rep := mustPackage(b, data, verify.Options{}); rep.OK() {
					b.Fatal("accepted")
				}
			}
		})
	}
}
