package verify_test

import (
	"bytes"
	"context"
	"math/rand/v2"
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
