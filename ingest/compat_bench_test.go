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

// hostBenchService is a service over n listed plugins of three releases each (api_version
// 1; 2 needing 0.92.0; 2 needing 0.95.0), rows straight to the store, index built.
func hostBenchService(b *testing.B, n int) *Service {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	var yaml strings.Builder
	yaml.WriteString("plugins:\n")
	for i := range n {
		id := fmt.Sprintf("p-%06d", i)
		fmt.Fprintf(&yaml, "  - id: %s\n    repo: acme/%s\n", id, id)
		for j, c := range []store.Card{{APIVersion: 1}, {APIVersion: 2, MinKandevVersion: "0.92.0"}, {APIVersion: 2, MinKandevVersion: "0.95.0"}} {
			version := fmt.Sprintf("1.%d.0", j)
			sha, err := st.Blobs.Put([]byte(id + "@" + version))
			if err != nil {
				b.Fatal(err)
			}
			c.Kind, c.Name, c.Description, c.Platforms = "plugin", id, "a plugin of the host benchmark", []string{"darwin-arm64", "linux-amd64"}
			rel := &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: 16, Manifest: []byte("id: " + id),
				PublishedBy: "bench", Card: &c}
			if _, err := st.InsertRelease(ctx, rel, store.AuditEntry{Actor: "bench", Action: "publish", Outcome: "ok"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	l, probs := index.ParseList([]byte(yaml.String()))
	if l == nil || probs.HasErrors() {
		b.Fatal(probs)
	}
	s := New(st, l, Config{PublicURL: "https://r.example", Plugin: verify.PluginLimits(), Canvas: verify.CanvasLimits()}, slog.New(slog.DiscardHandler))
	b.Cleanup(s.Close)
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkHostIndex measures a host-aware document: built for a new class (the release
// table already loaded), served from the cache, and the release table's full load (once
// per start; later changes update it package by package through the feed).
func BenchmarkHostIndex(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		s := hostBenchService(b, n)
		ctx := context.Background()
		h := mustHost(b, "0.93.0", "linux-amd64")
		if _, err := s.HostIndex(ctx, h); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("build/plugins=%d", n), func(b *testing.B) {
			for b.Loop() {
				s.host.mu.Lock()
				s.host.hot.Init()
				s.host.cold.Init()
				clear(s.host.byKey)
				s.host.hotBytes, s.host.coldBytes = 0, 0
				s.host.mu.Unlock()
				if _, err := s.HostIndex(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("cached/plugins=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.HostIndex(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("table/plugins=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.loadTable(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("compatibility/plugins=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Compatibility(ctx, "p-000000", h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// hostClassService is a service over n listed plugins with 30 distinct min_kandev_version
// values (plugin i: 1.0.0 with api_version 1; 1.1.0 with api_version 2 needing 0.92.(i%30)),
// so that linux-amd64 hosts fall in 32 classes: 0.91.0, 0.92.0 … 0.92.29 and 0.93.0.
func hostClassService(b *testing.B, n int, cfg Config) *Service {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	var yaml strings.Builder
	yaml.WriteString("plugins:\n")
	for i := range n {
		id := fmt.Sprintf("p-%06d", i)
		fmt.Fprintf(&yaml, "  - id: %s\n    repo: acme/%s\n", id, id)
		for j, c := range []store.Card{{APIVersion: 1}, {APIVersion: 2, MinKandevVersion: fmt.Sprintf("0.92.%d", i%30)}} {
			version := fmt.Sprintf("1.%d.0", j)
			sha, err := st.Blobs.Put([]byte(id + "@" + version))
			if err != nil {
				b.Fatal(err)
			}
			c.Kind, c.Name, c.Platforms = "plugin", id, []string{"darwin-arm64", "linux-amd64"}
			c.Description = "a plugin of the host class benchmark, with a description of a usual length for a listing entry"
			rel := &store.Release{PackageID: id, Version: version, Kind: "plugin", SHA256: sha, Size: 16, Manifest: []byte("id: " + id),
				PublishedBy: "bench", Card: &c}
			if _, err := st.InsertRelease(ctx, rel, store.AuditEntry{Actor: "bench", Action: "publish", Outcome: "ok"}); err != nil {
				b.Fatal(err)
			}
		}
	}
	l, probs := index.ParseList([]byte(yaml.String()))
	if l == nil || probs.HasErrors() {
		b.Fatal(probs)
	}
	cfg.PublicURL, cfg.Plugin, cfg.Canvas = "https://r.example", verify.PluginLimits(), verify.CanvasLimits()
	s := New(st, l, cfg, slog.New(slog.DiscardHandler))
	b.Cleanup(s.Close)
	if err := s.Rebuild(ctx); err != nil {
		b.Fatal(err)
	}
	return s
}

// classHosts are 32 linux-amd64 hosts, one per class of hostClassService.
func classHosts(b *testing.B) []Host {
	hs := []Host{mustHost(b, "0.91.0", "linux-amd64"), mustHost(b, "0.93.0", "linux-amd64")}
	for k := range 30 {
		hs = append(hs, mustHost(b, fmt.Sprintf("0.92.%d", k), "linux-amd64"))
	}
	return hs
}

// BenchmarkHostClassesCycled asks for 32 host classes in turn, as a client cycling host
// versions does, with the default cache bound: it reports the builds per request (1 is a
// rebuild every time), the build time, and the bytes the cache holds.
func BenchmarkHostClassesCycled(b *testing.B) {
	for _, n := range []int{1000, 5000, 10000} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			s := hostClassService(b, n, Config{})
			ctx := context.Background()
			hs := classHosts(b)
			var reqs int
			before := s.HostCacheInfo()
			for b.Loop() {
				for _, h := range hs {
					if _, err := s.HostIndexGzip(ctx, h); err != nil {
						b.Fatal(err)
					}
					reqs++
				}
			}
			in := s.HostCacheInfo()
			builds := in.Builds - before.Builds
			b.ReportMetric(float64(builds)/float64(reqs), "builds/req")
			b.ReportMetric(float64(in.Hits-before.Hits)/float64(reqs), "hits/req")
			if builds > 0 {
				b.ReportMetric(float64((in.BuildTime-before.BuildTime).Microseconds())/1000/float64(builds), "ms/build")
			}
			_, bytes := s.HostCacheStats()
			b.ReportMetric(float64(bytes)/(1<<20), "cacheMiB")
			b.ReportMetric(float64(in.Compressed), "compressed")
			// Every class built again with the entries already encoded (as after a change
			// that leaves most entries alone): the cost of a build that encodes nothing.
			s.host.mu.Lock()
			s.host.hot.Init()
			s.host.cold.Init()
			clear(s.host.byKey)
			s.host.hotBytes, s.host.coldBytes = 0, 0
			s.host.mu.Unlock()
			warm := s.HostCacheInfo()
			for _, h := range hs {
				if _, err := s.HostIndexGzip(ctx, h); err != nil {
					b.Fatal(err)
				}
			}
			end := s.HostCacheInfo()
			b.ReportMetric(float64((end.BuildTime-warm.BuildTime).Microseconds())/1000/float64(end.Builds-warm.Builds), "ms/warm-build")
		})
	}
}
