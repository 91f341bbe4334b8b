package store

import (
	"context"
	"strings"
	"testing"
)

// TestReleasesWithoutCardUsesItsIndex: the start's look for releases without a card reads
// the partial index of those rows, not every release (SQLite's plan names the index).
func TestReleasesWithoutCardUsesItsIndex(t *testing.T) {
	sqliteOnly(t, "reads SQLite's query plan")
	s := openScoreStore(t)
	rows, err := s.r.QueryContext(context.Background(), "EXPLAIN QUERY PLAN SELECT "+rowCols+" FROM releases "+withoutCard, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "releases_without_card") {
		t.Errorf("plan %q, want it to read the index releases_without_card", got)
	}
}
