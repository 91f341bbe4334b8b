package ingest

import (
	"fmt"
	"testing"

	"github.com/pluginyard/registry/store"
)

// BenchmarkQuarantineDownloadCheck is the check every download makes (DownloadRefusal) with
// n quarantines in force, for a package that is not quarantined (every download but a
// few) and for one that is: map reads, so the cost should not grow with n.
func BenchmarkQuarantineDownloadCheck(b *testing.B) {
	for _, n := range []int{10, 1000, 100000} {
		qs := make([]store.Quarantine, 0, n)
		for i := range n {
			q := store.Quarantine{PackageID: fmt.Sprintf("pkg-%06d", i), Reason: "malware"}
			if i%2 == 1 {
				q.Version = "1.0.0"
			}
			qs = append(qs, q)
		}
		s := &Service{}
		s.quar.Store(newQuarantineSet(qs))
		b.Run(fmt.Sprintf("quarantines=%d/miss", n), func(b *testing.B) {
			for b.Loop() {
				if s.DownloadRefusal("acme-hello", "1.0.0") != nil {
					b.Fatal("refused")
				}
			}
		})
		b.Run(fmt.Sprintf("quarantines=%d/hit", n), func(b *testing.B) {
			for b.Loop() {
				if s.DownloadRefusal("pkg-000001", "1.0.0") == nil {
					b.Fatal("not refused")
				}
			}
		})
	}
}
