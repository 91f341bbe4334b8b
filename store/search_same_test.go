package store_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/store/storetest"
)

// sameDocs is a catalogue whose words test the two tokenizers' agreement: diacritics and
// case beyond ASCII, separators inside ids, e-mail and version look-alikes, digits, CJK,
// query-syntax words, categories differing in case.
func sameDocs() []store.SearchDoc {
	words := []string{"Übersicht", "ubersicht", "café", "CAFE", "naïve", "Straße", "gen-notes", "a.b", "ops@example.com",
		"v1.2.3", "000042", "中文", "Привет", "ПРИВЕТ", "or", "not", "kanban", "Kanban-Pro", "board", "boards", "x2y"}
	cats := []string{"tools", "Tools", "dev_tools", "50%", "automation"}
	kinds := []string{"plugin", "canvas", "extension", "plugin"}
	now := time.Unix(1_800_000_000, 0)
	var docs []store.SearchDoc
	for i := range 120 {
		w := func(k int) string { return words[(i*k+k)%len(words)] }
		docs = append(docs, store.SearchDoc{
			ID: fmt.Sprintf("%s-%03d", []string{"gen", "board", "café", "tool"}[i%4], i), Name: w(3) + " " + w(5),
			Description: w(7) + " " + w(11) + " " + w(13) + " " + w(1), Author: w(17),
			Categories: []string{cats[i%len(cats)], cats[(i/5)%len(cats)]}, Kind: kinds[i%len(kinds)],
			UpdatedAt: now.Add(time.Duration(i%17) * time.Hour), Downloads: int64(i * 7919 % 101),
		})
	}
	return append(docs, store.SearchDoc{ID: "kanban", Name: "Übersicht", Description: "the exact one", Kind: "plugin", UpdatedAt: now})
}

// createICUDatabase creates a database on server whose default collation is ICU's
// English (not bytes: "a" < "B", lower() folds every letter), as a production database's
// often is, and returns its DSN; it is dropped in tb.Cleanup.
func createICUDatabase(tb testing.TB, server string) string {
	tb.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("search_icu_%d", time.Now().UnixNano())
	admin, err := pgx.Connect(ctx, server)
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name+" LOCALE_PROVIDER icu ICU_LOCALE 'en' LOCALE 'C' TEMPLATE template0"); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			tb.Error(err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			tb.Error(err)
		}
	})
	u, err := url.Parse(server)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// TestSearchSameOnBothBackends runs one catalogue and a table of searches (text, prefixes,
// exact matches, kinds, categories, every sort, pages) on SQLite and on PostgreSQL and
// wants the same answers (PostgreSQL on a database collated by ICU, not by bytes): the same ids in the same order and the same totals and
// category counts, except that relevance ranks by each database's own score (FTS5's bm25,
// PostgreSQL's ts_rank), where the same ids must come back, exact matches first.
func TestSearchSameOnBothBackends(t *testing.T) {
	ctx := context.Background()
	lite := MustOpenSQLite(t)
	pg, err := store.OpenURL(ctx, createICUDatabase(t, storetest.SharedPostgres(t)), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	for _, s := range []*store.Store{lite, pg} {
		if err := s.ReplaceSearch(ctx, sameDocs()); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{"", "ubersicht", "ÜBERSICHT", "cafe", "CAFÉ", "naive", "strasse", "straße", "gen", "notes", "a b", "example",
		"com", "v1", "2", "000042", "00004", "中文", "привет", "or", "not", "or not", `"); DROP`, "kan", "kanban", "Kanban-Pro",
		"boar", "boards", "x2", "zzz", "ca", "tool", "gen-notes"}
	var queries []store.SearchQuery
	for _, text := range texts {
		for _, sort := range []string{"", "name", "recent", "downloads"} {
			queries = append(queries, store.SearchQuery{Q: text, Sort: sort, Limit: 500})
		}
		queries = append(queries, store.SearchQuery{Q: text, Kind: "canvas", Sort: "name", Limit: 500},
			store.SearchQuery{Q: text, Category: "tools", Sort: "downloads", Limit: 500},
			store.SearchQuery{Q: text, Category: "TOOLS", Sort: "name", Limit: 500},
			store.SearchQuery{Q: text, Category: "dev_tools", Limit: 500},
			store.SearchQuery{Q: text, Sort: "recent", Limit: 3, Offset: 2})
	}
	for _, q := range queries {
		want, err := lite.SearchCounted(ctx, q)
		if err != nil {
			t.Fatalf("sqlite %+v: %v", q, err)
		}
		got, err := pg.SearchCounted(ctx, q)
		if err != nil {
			t.Fatalf("postgres %+v: %v", q, err)
		}
		if q.Sort == "" && q.Q != "" {
			if len(want.IDs) > 0 && len(got.IDs) > 0 && want.IDs[0] != got.IDs[0] && isExact(want.IDs[0], q.Q) {
				t.Errorf("%+v: postgres ranks %s first, sqlite the exact match %s", q, got.IDs[0], want.IDs[0])
			}
			slices.Sort(want.IDs)
			slices.Sort(got.IDs)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%+v: sqlite (-) and postgres (+) differ:\n%s", q, diff)
		}
	}
}

// isExact reports whether id is the exact match of text in sameDocs.
func isExact(id, text string) bool { return id == "kanban" && text == "kanban" }

// MustOpenSQLite opens a store on a fresh SQLite database, whatever REGISTRY_TEST_DATABASE says.
func MustOpenSQLite(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}
