package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

func mustReplaceSearch(tb testing.TB, b Backend, docs []store.SearchDoc) {
	tb.Helper()
	if err := b.ReplaceSearch(context.Background(), docs); err != nil {
		tb.Fatal(err)
	}
}

// testSearchExactFirst: a package whose id or display name equals the text (in any case,
// non-ASCII letters included) comes first, whatever the relevance score or the chosen sort
// says of the others, and only when it passes the kind filter.
func testSearchExactFirst(t *testing.T, b Backend) {
	ctx := context.Background()
	now := time.Now()
	mustReplaceSearch(t, b, []store.SearchDoc{
		{ID: "board-pro", Name: "Board Pro", Description: "board board board board board", Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 1000},
		{ID: "board", Name: "Kanban", Description: "A long description that says very little about the query word at all, on purpose", Kind: "plugin", UpdatedAt: now, Downloads: 1},
		{ID: "zzz-notes", Name: "Team Notes", Description: "notes notes notes", Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 500},
		{ID: "aaa-notes", Name: "Notes", Description: "a place for things you write down, rarely the word itself", Kind: "plugin", UpdatedAt: now, Downloads: 2},
		{ID: "notes-canvas", Name: "Canvas", Description: "notes on a canvas", Kind: "canvas", UpdatedAt: now, Downloads: 3},
		{ID: "zz-overview", Name: "Übersicht", Description: "an overview", Kind: "plugin", UpdatedAt: now, Downloads: 1},
		{ID: "aa-other", Name: "Other", Description: "übersicht übersicht übersicht", Kind: "plugin", UpdatedAt: now, Downloads: 100},
	})
	for _, tt := range []struct {
		q, sort, kind, want string
	}{
		{"board", "", "", "board"}, {"board", "downloads", "", "board"}, {"board", "recent", "", "board"},
		{"board", "name", "", "board"}, {"BOARD", "", "", "board"}, {"notes", "", "", "aaa-notes"},
		{"notes", "downloads", "", "aaa-notes"}, {"Notes", "recent", "", "aaa-notes"},
		{"notes", "downloads", "canvas", "notes-canvas"},                                    // aaa-notes is a plugin
		{"übersicht", "downloads", "", "zz-overview"}, {"ÜBERSICHT", "", "", "zz-overview"}, // every letter folds, not ASCII only
	} {
		got, _, err := b.Search(ctx, store.SearchQuery{Q: tt.q, Sort: tt.sort, Kind: tt.kind, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("Search(%q, sort=%q, kind=%q) = %v, want %q first", tt.q, tt.sort, tt.kind, got, tt.want)
		}
	}
	got, _, err := b.Search(ctx, store.SearchQuery{Q: "board", Sort: "downloads", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"board", "board-pro"}, got); diff != "" {
		t.Errorf("Search(board, downloads): the exact match, then the rest by downloads (-want +got):\n%s", diff)
	}
}

// testSearchFilters: text matches words and their prefixes in ids, names and
// descriptions; kind and category filter; sorts by name, recency or downloads; pages with
// offset and limit; the total counts every match; input is never query syntax.
func testSearchFilters(t *testing.T, b Backend) {
	ctx := context.Background()
	now := time.Now()
	mustReplaceSearch(t, b, []store.SearchDoc{
		{ID: "slack", Name: "Slack", Description: "Post to Slack channels", Categories: []string{"connector"}, Kind: "plugin", UpdatedAt: now, Downloads: 5},
		{ID: "slack-extras", Name: "Slack Extras", Description: "More slack things", Categories: []string{"tools"}, Kind: "plugin", UpdatedAt: now.Add(time.Hour), Downloads: 50},
		{ID: "board", Name: "Task Board", Description: "A canvas board; mentions slack once", Categories: []string{"canvas", "tools"}, Kind: "canvas", UpdatedAt: now},
	})
	tests := []struct {
		q     store.SearchQuery
		want  []string
		total int
	}{
		{store.SearchQuery{Q: "slack", Limit: 10}, []string{"slack", "slack-extras", "board"}, 3},
		{store.SearchQuery{Q: "sla", Kind: "plugin", Limit: 10}, []string{"slack", "slack-extras"}, 2},
		{store.SearchQuery{Q: "slack", Category: "tools", Sort: "name", Limit: 10}, []string{"slack-extras", "board"}, 2},
		{store.SearchQuery{Category: "tools", Sort: "name", Limit: 10}, []string{"slack-extras", "board"}, 2},
		{store.SearchQuery{Category: "tool", Limit: 10}, nil, 0}, // a category is matched whole
		{store.SearchQuery{Sort: "downloads", Limit: 1}, []string{"slack-extras"}, 3},
		{store.SearchQuery{Sort: "recent", Limit: 1}, []string{"slack-extras"}, 3},
		{store.SearchQuery{Sort: "name", Limit: 10, Offset: 1}, []string{"slack-extras", "board"}, 3},
		{store.SearchQuery{Q: "channels", Limit: 10}, []string{"slack"}, 1},
		{store.SearchQuery{Q: "slack", Offset: 2, Limit: 10}, []string{"board"}, 3},
		{store.SearchQuery{Q: `"); DROP TABLE search; --`, Limit: 10}, nil, 0},
		{store.SearchQuery{Q: `slack OR NOT* "`, Limit: 10}, nil, 0}, // "or" and "not" are words, not operators
	}
	for _, tt := range tests {
		got, total, err := b.Search(ctx, tt.q)
		if err != nil {
			t.Fatalf("%+v: %v", tt.q, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != tt.total {
			t.Errorf("Search(%+v): ids (-want +got):\n%s total %d, want %d", tt.q, diff, total, tt.total)
		}
	}
}

// testSearchUpsertDelete: an upsert replaces the rows of the ids it names (their old
// words and names no longer match, the exact match follows a rename), adds new ids and
// leaves the others alone; a delete removes exactly the ids it names; a full rebuild
// keeps the last doc of an id given twice.
func testSearchUpsertDelete(t *testing.T, b Backend) {
	ctx := context.Background()
	now := time.Now()
	a := store.SearchDoc{ID: "a-tool", Name: "Kanban", Description: "kanban kanban kanban columns", Kind: "plugin", UpdatedAt: now, Downloads: 10}
	c := store.SearchDoc{ID: "c-tool", Name: "Gone", Description: "kanban kanban kanban kanban", Kind: "plugin", UpdatedAt: now}
	mustReplaceSearch(t, b, []store.SearchDoc{
		{ID: "b-tool", Name: "Dup", Description: "older words", Kind: "plugin", UpdatedAt: now},
		a, c,
		{ID: "b-tool", Name: "Other", Description: "a kanban", Kind: "plugin", UpdatedAt: now, Downloads: 1},
	})
	a.Name, a.Description = "Board", "kanban kanban kanban scrum"
	fresh := store.SearchDoc{ID: "new-one", Name: "New", Description: "kanban fresh", Kind: "canvas", UpdatedAt: now}
	if err := b.UpsertSearch(ctx, []store.SearchDoc{a, fresh, {ID: "b-tool", Name: "Kanban", Description: "a kanban", Kind: "plugin", UpdatedAt: now}}); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteSearch(ctx, []string{c.ID, "never-there"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		q, sort string
		want    []string
	}{
		{"kanban", "", []string{"b-tool", "a-tool", "new-one"}}, // b-tool is now named Kanban
		{"kanban", "name", []string{"b-tool", "a-tool", "new-one"}},
		{"columns", "", nil}, {"scrum", "", []string{"a-tool"}}, {"fresh", "", []string{"new-one"}},
		{"gone", "", nil}, {"older", "", nil},
		{"", "name", []string{"a-tool", "b-tool", "new-one"}},
	} {
		got, total, err := b.Search(ctx, store.SearchQuery{Q: tt.q, Sort: tt.sort, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || total != len(tt.want) {
			t.Errorf("Search(%q, sort=%q) after upsert and delete (-want +got):\n%s total %d", tt.q, tt.sort, diff, total)
		}
	}
}
