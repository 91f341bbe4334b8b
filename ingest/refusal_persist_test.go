package ingest

import (
	"context"
	"testing"

	"github.com/pluginyard/registry/index"
)

// TestRefusedReloadStaysReportedThroughRefreshes: a rebuild that only refreshes totals
// (after a download flush) does not clear the report of a refused reload, whose list is
// still not in force.
func TestRefusedReloadStaysReportedThroughRefreshes(t *testing.T) {
	l := publishList()
	s := newPublishService(t, l, Config{})
	var first *PublishResult
	for _, e := range l.Plugins {
		res := publishOK(t, s, e.ID, "1.0.0", "x")
		if first == nil {
			first = res
		}
	}
	if err := s.SetList(context.Background(), &index.List{Plugins: l.Plugins[:1]}, "admin"); ruleOf(err) != "index.shrink" {
		t.Fatalf("SetList = %v, want index.shrink", err)
	}
	s.CountDownload(first.Release.ID)
	if err := s.FlushDownloads(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r := s.LastRefusal(); r == nil {
		t.Error("the refused reload is no longer reported after a refresh, though its list is not in force")
	}
}
