package store_test

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// openPair opens two handles on one database (two replicas' stores): SQLite's file, or
// a fresh PostgreSQL database.
func openPair(t *testing.T, postgres bool) (a, b *store.Store) {
	t.Helper()
	url := "sqlite:" + filepath.Join(t.TempDir(), store.DBFile)
	if postgres {
		url = storetest.CreateDatabase(t, storetest.SharedPostgres(t))
	}
	var out []*store.Store
	for range 2 {
		s, err := store.OpenURL(context.Background(), url, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		out = append(out, s)
	}
	return out[0], out[1]
}

func docsOf(serial int64, body string) []store.StoredDocument {
	at := time.Date(2026, 12, 1, 15, 0, 0, 123456789, time.UTC)
	return []store.StoredDocument{
		{Serial: serial, Name: store.DocumentCurupira, ETag: `"c` + body + `"`, GeneratedAt: at, Meta: []byte(`{"plugins":1}`), Body: []byte("curupira " + body), BuiltBy: "a"},
		{Serial: serial, Name: store.DocumentKandev, ETag: `"k` + body + `"`, GeneratedAt: at, Meta: []byte(`{"plugins":1}`), Body: []byte("kandev " + body), BuiltBy: "a"},
	}
}

func TestDocuments(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			a, b := openPair(t, pg)
			if got, err := b.Documents(ctx, 1); err != nil || len(got) != 0 {
				t.Fatalf("Documents of a serial nobody stored = %v, %v; want none", got, err)
			}
			if ok, err := a.PutDocuments(ctx, docsOf(1, "first")); !ok || err != nil {
				t.Fatalf("first PutDocuments of serial 1 = %v, %v; want stored", ok, err)
			}
			if ok, err := b.PutDocuments(ctx, docsOf(1, "second")); ok || err != nil {
				t.Fatalf("second PutDocuments of serial 1 = %v, %v; want not stored (the first builder wins)", ok, err)
			}
			got, err := b.Documents(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(docsOf(1, "first"), got); diff != "" {
				t.Fatalf("Documents(1) through the other handle (-want +got):\n%s", diff)
			}
			mixed := append(docsOf(2, "x")[:1], docsOf(3, "x")[1])
			if _, err := a.PutDocuments(ctx, mixed); err == nil {
				t.Fatal("PutDocuments of two serials at once was accepted")
			}
			for s := int64(2); s <= 1+store.DocumentsKept; s++ {
				if _, err := a.PutDocuments(ctx, docsOf(s, "n")); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := a.Documents(ctx, 1); len(got) != 0 {
				t.Fatalf("serial 1 is kept %d serials later; the table keeps %d", store.DocumentsKept, store.DocumentsKept)
			}
			if got, _ := a.Documents(ctx, 2); len(got) != 2 {
				t.Fatalf("serial 2 was pruned %d serials later; the table keeps %d", store.DocumentsKept-1, store.DocumentsKept)
			}
			racePutDocuments(t, a, b)
		})
	}
}

func TestBuildLockOnPostgres(t *testing.T) {
	ctx := context.Background()
	a, b := openPair(t, true)
	releaseA, ok, err := a.TryBuildLock(ctx, 7)
	if !ok || err != nil {
		t.Fatalf("a's lock of serial 7 = %v, %v", ok, err)
	}
	if _, ok, err := b.TryBuildLock(ctx, 7); ok || err != nil {
		t.Fatalf("b took serial 7's lock while a holds it (%v, %v)", ok, err)
	}
	releaseB8, ok, err := b.TryBuildLock(ctx, 8)
	if !ok || err != nil {
		t.Fatalf("b's lock of serial 8, another serial = %v, %v", ok, err)
	}
	releaseB8()
	releaseA()
	releaseB, ok, err := b.TryBuildLock(ctx, 7)
	if !ok || err != nil {
		t.Fatalf("b's lock of serial 7 once a released it = %v, %v", ok, err)
	}
	releaseB()
}

func TestBuildLockOnSQLiteIsAlwaysHeld(t *testing.T) {
	a, _ := openPair(t, false)
	for range 2 {
		release, ok, err := a.TryBuildLock(context.Background(), 1)
		if !ok || err != nil {
			t.Fatalf("SQLite's build lock = %v, %v; one process owns the file, so it always holds it", ok, err)
		}
		release()
	}
}

func TestListenChanges(t *testing.T) {
	a, b := openPair(t, true)
	ctx, cancel := context.WithCancel(context.Background())
	woken := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() { done <- a.ListenChanges(ctx, func() { woken <- struct{}{} }) }()
	<-woken // listening
	if err := b.BumpSerial(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case err := <-done:
		t.Fatalf("ListenChanges stopped before the change: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no notification of the other handle's serial bump")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("ListenChanges after its context ended = %v, want context.Canceled", err)
	}
	sq, _ := openPair(t, false)
	if err := sq.ListenChanges(context.Background(), func() {}); !errors.Is(err, store.ErrNoNotify) {
		t.Fatalf("ListenChanges on SQLite = %v, want ErrNoNotify", err)
	}
}

// racePutDocuments has eight builders, over both handles, store serial 100 at once: one
// is stored, whole, and the others are told they lost.
func racePutDocuments(t *testing.T, a, b *store.Store) {
	t.Helper()
	var wg sync.WaitGroup
	won := make(chan string, 8)
	for i := range 8 {
		st := a
		if i%2 == 1 {
			st = b
		}
		body := strconv.Itoa(i)
		wg.Go(func() {
			ok, err := st.PutDocuments(context.Background(), docsOf(100, body))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won <- body
			}
		})
	}
	wg.Wait()
	close(won)
	var winners []string
	for w := range won {
		winners = append(winners, w)
	}
	if len(winners) != 1 {
		t.Fatalf("%d builders stored serial 100 (%v), want one", len(winners), winners)
	}
	got, err := a.Documents(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(docsOf(100, winners[0]), got); diff != "" {
		t.Fatalf("serial 100 is not the winner's documents, whole (-want +got):\n%s", diff)
	}
}
