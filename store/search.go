package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
)

// SearchDoc is what search knows of a package's latest listed release.
type SearchDoc struct {
	ID          string
	Name        string
	Description string
	Author      string
	Categories  []string
	Kind        string
	UpdatedAt   time.Time
	Downloads   int64
}

// SearchQuery selects and orders packages. Sort is relevance (the default), name, recent
// or downloads.
type SearchQuery struct {
	Q        string
	Kind     string
	Category string
	Sort     string
	Limit    int
	Offset   int
}

// ReplaceSearch replaces the whole search table with docs, in one transaction.
func (s *Store) ReplaceSearch(ctx context.Context, docs []SearchDoc) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM search"); err != nil {
			return fmt.Errorf("store: clear search: %w", err)
		}
		return insertSearchRows(ctx, tx, docs)
	})
}

// UpsertSearch inserts the rows of docs, replacing any row already there for the same id,
// in one transaction: an incremental build changes the rows of the packages it touched and
// leaves the others alone (ReplaceSearch is for full rebuilds).
func (s *Store) UpsertSearch(ctx context.Context, docs []SearchDoc) error {
	docs = lastPerID(docs)
	return s.tx(ctx, func(tx *sql.Tx) error {
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.ID
		}
		if err := deleteSearchRows(ctx, tx, ids); err != nil {
			return err
		}
		return insertSearchRows(ctx, tx, docs)
	})
}

// lastPerID keeps the last doc of each id, in order: one row per package, as a sequence of
// single upserts would leave.
func lastPerID(docs []SearchDoc) []SearchDoc {
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.ID] = i
	}
	out := make([]SearchDoc, 0, len(last))
	for i, d := range docs {
		if last[d.ID] == i {
			out = append(out, d)
		}
	}
	return out
}

// DeleteSearch removes the rows of ids (an id without a row is not an error), in one
// transaction.
func (s *Store) DeleteSearch(ctx context.Context, ids []string) error {
	return s.tx(ctx, func(tx *sql.Tx) error { return deleteSearchRows(ctx, tx, ids) })
}

// insertSearchRows inserts one row per doc.
func insertSearchRows(ctx context.Context, tx *sql.Tx, docs []SearchDoc) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO search (id, name, description, author, categories, kind, updated_at, downloads)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("store: search insert: %w", err)
	}
	defer stmt.Close()
	for _, d := range docs {
		if _, err := stmt.ExecContext(ctx, d.ID, d.Name, d.Description, d.Author, strings.Join(d.Categories, " "),
			d.Kind, d.UpdatedAt.UTC().Format(time.RFC3339), d.Downloads); err != nil {
			return fmt.Errorf("store: search insert %s: %w", d.ID, err)
		}
	}
	return nil
}

// deleteSearchRows deletes the rows whose id is one of ids. The search table is FTS5 (no
// index on id equality), so each id is found through the full-text index of its own
// column (the phrase of its words) and then compared exactly: the cost is that of a
// lookup, not a scan of the catalogue.
func deleteSearchRows(ctx context.Context, tx *sql.Tx, ids []string) error {
	for _, id := range ids {
		query, args := "DELETE FROM search WHERE id = ?", []any{id}
		if phrase := idPhrase(id); phrase != "" {
			query = "DELETE FROM search WHERE rowid IN (SELECT rowid FROM search WHERE search MATCH ? AND id = ?)"
			args = []any{phrase, id}
		}
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("store: search delete %s: %w", id, err)
		}
	}
	return nil
}

// idPhrase is an FTS5 query matching rows whose id column holds the words of id in order
// ("" when id has no word: the caller then compares every row).
func idPhrase(id string) string {
	words := strings.FieldsFunc(id, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if len(words) == 0 {
		return ""
	}
	return `id : "` + strings.Join(words, " ") + `"`
}

// searchWhere is the WHERE condition of q (its free text, kind and category) and its
// arguments.
func searchWhere(q SearchQuery) (string, []any) {
	where, args := []string{"1 = 1"}, []any{}
	if match := ftsQuery(q.Q); match != "" {
		where = append(where, "search MATCH ?")
		args = append(args, match)
	}
	if q.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, q.Kind)
	}
	if q.Category != "" {
		where = append(where, `(' ' || categories || ' ') LIKE ? ESCAPE '\'`)
		args = append(args, "% "+likeEscape(q.Category)+" %")
	}
	return strings.Join(where, " AND "), args
}

// Search returns the ids matching q in order, and the total number of matches.
func (s *Store) Search(ctx context.Context, q SearchQuery) ([]string, int, error) {
	cond, args := searchWhere(q)
	match := ftsQuery(q.Q)
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM search WHERE "+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: search count: %w", err)
	}
	order := searchOrder(q.Sort, match != "")
	exact := strings.ToLower(strings.TrimSpace(q.Q))
	query := "SELECT id FROM search WHERE " + cond + " ORDER BY (lower(id) = ? OR lower(name) = ?) DESC, " + order + " LIMIT ? OFFSET ?"
	rows, err := s.r.QueryContext(ctx, query, append(args, exact, exact, q.Limit, q.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, 0, fmt.Errorf("store: search: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, total, rows.Err()
}

// CategoryCounts counts, per category, the packages matching q's free text and kind
// (q.Category, Sort, Limit and Offset are ignored): each count is the total that Search
// returns for q with that category.
func (s *Store) CategoryCounts(ctx context.Context, q SearchQuery) (map[string]int, error) {
	q.Category = ""
	cond, args := searchWhere(q)
	rows, err := s.r.QueryContext(ctx, "SELECT categories FROM search WHERE "+cond, args...)
	if err != nil {
		return nil, fmt.Errorf("store: category counts: %w", err)
	}
	defer rows.Close()
	counts := map[string]int{}
	for rows.Next() {
		var cats string
		if err := rows.Scan(&cats); err != nil {
			return nil, fmt.Errorf("store: category counts: %w", err)
		}
		fields := strings.Fields(cats)
		for i, c := range fields {
			if !slices.Contains(fields[:i], c) { // a package counts once per category, as the LIKE filter does
				counts[c]++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: category counts: %w", err)
	}
	return counts, nil
}

// likeEscaper escapes LIKE's wildcards (% and _) and the escape character itself, for a
// pattern written with ESCAPE '\': user input then matches only itself.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// likeEscape returns s as a LIKE pattern that matches s literally (with ESCAPE '\').
func likeEscape(s string) string { return likeEscaper.Replace(s) }

func searchOrder(sort string, hasQuery bool) string {
	switch sort {
	case "name":
		return "lower(name), id"
	case "recent":
		return "updated_at DESC, id"
	case "downloads":
		return "CAST(downloads AS INTEGER) DESC, id"
	}
	if hasQuery {
		return "bm25(search, 10.0, 5.0, 1.0, 2.0, 2.0), id"
	}
	return "lower(name), id"
}

// ftsQuery turns free text into an FTS5 query: each word becomes a quoted prefix term, so
// user input can never be FTS syntax.
func ftsQuery(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`"*`)
	}
	return strings.Join(terms, " ")
}
