package ingest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/pluginyard/registry/index"
	"github.com/pluginyard/registry/store"
)

// BenchmarkForbiddenPublish measures a publish refused from its file name: its cost must not
// grow with the package, which is never read.
func BenchmarkForbiddenPublish(b *testing.B) {
	st := mustStoreB(b)
	s := New(st, publishList(), Config{PublicURL: "http://r.example"}, discard())
	defer s.Close()
	stranger := Actor{Name: "publisher:globex", Publisher: "globex"}
	for _, size := range []int{1 << 10, 1 << 20, 8 << 20, 64 << 20} {
		data := bytes.Repeat([]byte{0x1f}, size)
		b.Run(fmt.Sprintf("package=%dKiB", size>>10), func(b *testing.B) {
			for b.Loop() {
				_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(data), FileName: "acme-hello-1.0.0.tar.gz", Actor: stranger})
				if ruleOf(err) != "publish.forbidden" {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCandidateBuild measures the index build a change is checked against before its
// commit, by catalogue size (manifests cached, as in a running registry).
func BenchmarkCandidateBuild(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("releases=%d", n), func(b *testing.B) {
			st := mustStoreB(b)
			l := &index.List{}
			ctx := context.Background()
			for i := range n {
				id := fmt.Sprintf("plugin-%04d", i)
				l.Plugins = append(l.Plugins, index.Entry{ID: id, Repo: "acme/" + id, Kind: index.KindPlugin})
				rel := &store.Release{PackageID: id, Version: "1.0.0", Kind: "plugin", SHA256: fmt.Sprintf("%064x", i), Size: 1,
					Manifest: []byte("id: " + id + "\napi_version: 2\nversion: 1.0.0\ndisplay_name: P\ndescription: " + strings.Repeat("d", 200) + "\nauthor: A\n")}
				if _, err := st.InsertRelease(ctx, rel, store.AuditEntry{Actor: "b", Action: "publish"}); err != nil {
					b.Fatal(err)
				}
			}
			s := New(st, l, Config{PublicURL: "http://r.example"}, discard())
			defer s.Close()
			if err := s.Rebuild(ctx); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := s.checkCandidate(ctx, "bench", func(*state) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
