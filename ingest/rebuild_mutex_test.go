package ingest

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"
)

// TestRebuildsAreSerialised: a rebuild that read the store before a publish committed must
// not put its older documents in force after the publish's own rebuild. rebuildMu makes the
// publish wait for the slow rebuild; without it, the publish finishes first and the slow
// rebuild then installs documents without the new release.
func TestRebuildsAreSerialised(t *testing.T) {
	s := newPublishService(t, publishList(), Config{})
	publishOK(t, s, "acme-hello", "1.0.0", "first")

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.beforeInstall = func() {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-release
		}
	}
	slow := make(chan error, 1)
	go func() { slow <- s.Rebuild(context.Background()) }()
	<-entered // the slow rebuild has built from the store without 1.1.0

	published := make(chan error, 1)
	go func() {
		_, err := s.Publish(context.Background(), PublishInput{Package: bytes.NewReader(plugin(t, "acme-hello", "1.1.0", "second")),
			FileName: PackageFileName("acme-hello", "1.1.0"), Actor: anAdmin})
		published <- err
	}()
	// Give an unserialised publish the chance to finish first; a serialised one waits.
	select {
	case err := <-published:
		published <- err
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	if got := indexed(s, "acme-hello"); got != "1.1.0" {
		t.Errorf("index.json lists acme-hello %q after both finished, want 1.1.0: an older rebuild replaced a newer one", got)
	}
	serial, err := s.store.Serial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.Documents().Serial != serial {
		t.Errorf("documents serial %d, store serial %d", s.Documents().Serial, serial)
	}
}
