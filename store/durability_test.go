package store

import (
	"context"
	"fmt"
	"testing"
)

// syncFull is PRAGMA synchronous's value for FULL.
const syncFull = 2

func TestWriterCommitsDurably(t *testing.T) {
	sqliteOnly(t, "PRAGMA synchronous of the SQLite writer")
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got int
	if err := s.w.QueryRow("PRAGMA synchronous").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != syncFull {
		t.Errorf("writer PRAGMA synchronous = %d, want %d (FULL): a commit answered 201 must survive power loss", got, syncFull)
	}
}

// BenchmarkWriteCommit measures one committed write transaction (an audit row) on the
// writer, the cost synchronous=FULL adds an fsync to.
func BenchmarkWriteCommit(b *testing.B) {
	s, err := Open(context.Background(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if err := s.Audit(ctx, AuditEntry{Actor: "bench", Action: "bench", Target: fmt.Sprint(i), Outcome: "ok"}); err != nil {
			b.Fatal(err)
		}
	}
}
