package ingest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/pluginyard/registry/version"
)

// Publishes committed while a build is pending share one build, and each returns only once
// the documents in force show its release.
func TestPublishesCommittedTogetherShareOneBuild(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	const n = 8
	pkgs := make([][]byte, n)
	for i := range n {
		pkgs[i] = plugin(t, "acme-hello", fmt.Sprintf("1.0.%d", i), "x")
	}
	s.beforeBuild = func() { // the first build waits until every publish is committed
		for deadline := time.Now().Add(10 * time.Second); s.builds.last() < n && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	before := s.builds.batches
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			v := fmt.Sprintf("1.0.%d", i)
			_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(pkgs[i]), FileName: "acme-hello-" + v + ".tar.gz", Actor: anAdmin})
			if err == nil {
				if got := indexed(s, "acme-hello"); got == "" || version.Compare(got, v) < 0 {
					err = fmt.Errorf("returned while the index lists acme-hello at %q", got)
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("publish 1.0.%d: %v", i, err)
		}
	}
	if got := s.builds.batches - before; got != 1 {
		t.Errorf("%d publishes committed together ran %d builds, want 1", n, got)
	}
	if got := indexed(s, "acme-hello"); got != fmt.Sprintf("1.0.%d", n-1) {
		t.Errorf("index lists acme-hello at %q, want the newest", got)
	}
}
