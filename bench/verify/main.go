// Command verify-bench supports bench/verify/run.sh: it writes realistic test packages of
// a given size, and measures the peak heap of verify.Package on one.
//
//	verify-bench gen -mib 50 -out DIR      writes DIR/bench-plugin-1.0.0.tar.gz
//	verify-bench heap FILE                 prints the peak heap above idle while verifying
//	verify-bench verify FILE               verifies FILE once (when cmd/registry does not build)
package main

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/pluginyard/registry/verify"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "verify-bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: verify-bench gen -mib N -out DIR | heap FILE | verify FILE")
	}
	switch args[0] {
	case "gen":
		fs := flag.NewFlagSet("gen", flag.ContinueOnError)
		mib := fs.Int("mib", 50, "approximate compressed size in MiB")
		out := fs.String("out", ".", "output directory")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		path, err := generate(*out, int64(*mib)<<20)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, path)
		return nil
	case "heap":
		if len(args) != 2 {
			return errors.New("usage: verify-bench heap FILE")
		}
		return heap(ctx, args[1], stdout)
	case "verify":
		if len(args) != 2 {
			return errors.New("usage: verify-bench verify FILE")
		}
		return verifyOnce(ctx, args[1])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

// ratioPercent is the measured compressed/uncompressed ratio of binaryFile (with the package overhead), in percent.
const ratioPercent = 85

const benchManifest = `id: bench-plugin
api_version: 2
version: "1.0.0"
display_name: Bench Plugin
description: A generated managed plugin for the verify benchmark.
author: Pluginyard
categories: [tools]
repo_url: https://github.com/pluginyard/bench-plugin
icon: assets/icon.svg
runtime:
  type: binary
  executables:
    linux-amd64: server/plugin-linux-amd64
    linux-arm64: server/plugin-linux-arm64
    darwin-amd64: server/plugin-darwin-amd64
    darwin-arm64: server/plugin-darwin-arm64
capabilities:
  events: [task.created]
`

// generate writes a managed plugin whose compressed size is about target: four platform
// executables (the bulk: mostly high-entropy bytes with some repetitive sections, as in a
// real Go binary), a UI bundle of text files, an icon, a README and checksums.txt.
func generate(dir string, target int64) (string, error) {
	rng := rand.New(rand.NewChaCha8([32]byte{1}))
	files := map[string][]byte{
		"manifest.yaml":   []byte(benchManifest),
		"README.md":       []byte("# Bench Plugin\n\nGenerated for the verify benchmark.\n"),
		"assets/icon.svg": []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"><rect width="8" height="8" fill="#36c"/></svg>` + "\n"),
	}
	for i := range 40 {
		files[fmt.Sprintf("ui/chunks/chunk-%02d.js", i)] = textFile(rng, 64<<10)
	}
	// Executables compress to about 85% of their size; size them so the package lands
	// near target.
	per := (target - 1<<20) * 100 / ratioPercent / 4
	for _, p := range []string{"linux-amd64", "linux-arm64", "darwin-amd64", "darwin-arm64"} {
		files["server/plugin-"+p] = binaryFile(rng, per)
	}
	path := filepath.Join(dir, "bench-plugin-1.0.0.tar.gz")
	return path, writePackage(path, files)
}

// binaryFile mixes three kinds of 64 KiB sections, as a compiled binary does: machine
// code-like bytes with a skewed distribution (Huffman-coded, not stored, by gzip), fully
// random bytes (compressed data, hashes), and repetitive symbol tables (long matches).
func binaryFile(rng *rand.Rand, size int64) []byte {
	b := make([]byte, size)
	for off := int64(0); off < size; off += 64 << 10 {
		chunk := b[off:min(off+64<<10, size)]
		switch k := rng.IntN(8); {
		case k == 0:
			for i := range chunk {
				chunk[i] = "runtime.main\x00syscall.Read\x00"[(i+int(off))%26]
			}
		case k <= 4:
			for i := range chunk {
				v := rng.Uint64()
				chunk[i] = byte(v) & byte(v>>8) // bits biased to 0: about 5.5 bits per byte
			}
		default:
			for i := 0; i+8 <= len(chunk); i += 8 {
				v := rng.Uint64()
				for j := range 8 {
					chunk[i+j] = byte(v >> (8 * j))
				}
			}
		}
	}
	return b
}

func textFile(rng *rand.Rand, size int) []byte {
	words := []string{"function", "return", "const", "let", "if", "else", "await", "props", "state", "render", "=>", "{", "}", "(", ")", ";", "\n"}
	var b strings.Builder
	for b.Len() < size {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(' ')
	}
	return []byte(b.String())
}

// writePackage writes files as a package: sorted paths, checksums.txt last.
func writePackage(path string, files map[string][]byte) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := gzip.NewWriter(bw)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var sums strings.Builder
	for _, n := range names {
		sum := sha256.Sum256(files[n])
		sums.WriteString(hex.EncodeToString(sum[:]) + "  " + n + "\n")
	}
	files["checksums.txt"] = []byte(sums.String())
	for _, n := range append(names, "checksums.txt") {
		mode := int64(0o644)
		if strings.HasPrefix(n, "server/") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			return fmt.Errorf("tar: %w", err)
		}
		if _, err := tw.Write(files[n]); err != nil {
			return fmt.Errorf("tar: %w", err)
		}
	}
	if err := errors.Join(tw.Close(), zw.Close(), bw.Flush()); err != nil {
		return fmt.Errorf("write package: %w", err)
	}
	return nil
}

// heap verifies file once while sampling the heap every 200µs through runtime/metrics,
// and prints the peak above the idle heap measured just before.
func heap(ctx context.Context, file string, stdout io.Writer) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	idle := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	rep, err := verify.Package(ctx, f, verify.Options{FileName: filepath.Base(file)})
	elapsed := time.Since(start)
	if v := read(); v > peak.Load() {
		peak.Store(v)
	}
	close(done)
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !rep.OK() {
		return fmt.Errorf("verify: the generated package is invalid: %v", rep.Problems)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(stdout, "peak_heap_above_idle_mib %.1f\n", float64(peak.Load()-idle)/(1<<20))
	fmt.Fprintf(stdout, "total_alloc_mib %.1f\n", float64(ms.TotalAlloc)/(1<<20))
	fmt.Fprintf(stdout, "verify_seconds %.3f\n", elapsed.Seconds())
	return nil
}

// verifyOnce is what `registry verify FILE` does, without the output.
func verifyOnce(ctx context.Context, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	defer f.Close()
	rep, err := verify.Package(ctx, f, verify.Options{FileName: filepath.Base(file)})
	if err != nil {
		return fmt.Errorf("verify: %w", err)
	}
	if !rep.OK() {
		return fmt.Errorf("verify: invalid package: %v", rep.Problems)
	}
	return nil
}
