package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/verify"
)

// benchCatalogue is a service over n listed packages of one release each, plus "target"
// with releases releases; rows go straight to the store (no package checks), since only
// the reads are measured.
func benchCatalogue(b *testing.B, n, releases int) *Service {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	var yaml strings.Builder
	yaml.WriteString("plugins:\n  - id: target\n    repo: acme/target\n")
	insert := func(id, version string) {
		sha, err := st.Blobs.Put([]byte(id + "@" + version))
		if err != nil {
			b.Fatal(err)
		}
		rel := &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: 16, Manifest: []byte("id: " + id),
			PublishedBy: "bench", Card: &store.Card{Kind: "plugin", Name: id, APIVersion: 2, Platforms: []string{"linux-amd64"}}}
		if _, err := st.InsertRelease(ctx, rel, store.AuditEntry{Actor: "bench", Action: "publish", Outcome: "ok"}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range n {
		id := fmt.Sprintf("p-%06d", i)
		fmt.Fprintf(&yaml, "  - id: %s\n    repo: acme/%s\n", id, id)
		insert(id, "1.0.0")
	}
	for i := range releases {
		insert("target", fmt.Sprintf("1.%d.0", i))
	}
	l, probs := index.ParseList([]byte(yaml.String()))
	if l == nil || probs.HasErrors() {
		b.Fatal(probs)
	}
	return New(st, l, Config{PublicURL: "https://r.example", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, slog.New(slog.DiscardHandler))
}

// BenchmarkPackageIndex builds one package's document in catalogues of growing size (its
// cost must not grow with them) and for packages of growing release counts (it grows
// with those).
func BenchmarkPackageIndex(b *testing.B) {
	for _, c := range []struct{ catalogue, releases int }{{100, 5}, {1000, 5}, {5000, 5}, {100, 50}} {
		b.Run(fmt.Sprintf("catalogue=%d/releases=%d", c.catalogue, c.releases), func(b *testing.B) {
			svc := benchCatalogue(b, c.catalogue, c.releases)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := svc.PackageIndexByFile(ctx, "target"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFeed reads the last page of 100 changes from feeds of growing length: the
// serial is the table's key, so the cost is that of the page.
func BenchmarkFeed(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("changes=%d", n), func(b *testing.B) {
			svc := benchCatalogue(b, n, 0)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, _, err := svc.Feed(ctx, int64(n-100), 100); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
