package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// pgSearch is PostgreSQL's search table (migrations/postgres/0002_search.sql): the rows,
// rowid bands and keys of SQLite's, plus doc, a tsvector under a GIN index. The store
// makes doc from the words SQLite's tokenizer sees (pgText: letters and digits, case and
// diacritics folded as unicode61 remove_diacritics 2 folds them) under the 'simple'
// configuration (no stemming, no stop words: FTS5 has neither), each column weighted as
// bm25 weights it in SQLite (id 10 → A, name 5 → B, author and categories 2 → C,
// description 1 → D), so both backends match the same rows for the same text.
type pgSearch struct{}

// pgInsertBatch is how many rows one INSERT writes: a full rebuild is a few statements
// rather than a round trip per row (50k rows: 23 s one by one), the write lock held
// meanwhile.
const pgInsertBatch = 1000

// insert writes docs pgInsertBatch at a time, each column an array unnested.
func (pgSearch) insert(ctx context.Context, tx *sql.Tx, docs []SearchDoc, rowids []int64) error {
	for start := 0; start < len(docs); start += pgInsertBatch {
		end := min(len(docs), start+pgInsertBatch)
		if err := pgInsertRows(ctx, tx, docs[start:end], rowids[start:end]); err != nil {
			return err
		}
	}
	return nil
}

func pgInsertRows(ctx context.Context, tx *sql.Tx, docs []SearchDoc, rowids []int64) error {
	const cols = 12 // the text columns, in the order of the unnest below
	text := make([][]string, cols)
	downloads := make([]int64, len(docs))
	keys, keyRowids := make([]string, 0, 2*len(docs)), make([]int64, 0, 2*len(docs))
	for i, d := range docs {
		cats := strings.Join(d.Categories, " ")
		for c, v := range [cols]string{d.ID, d.Name, d.Description, d.Author, cats, d.Kind, d.UpdatedAt.UTC().Format(time.RFC3339),
			pgText(d.ID), pgText(d.Name), pgText(d.Description), pgText(d.Author), pgText(cats)} {
			text[c] = append(text[c], v)
		}
		downloads[i] = d.Downloads
		keys, keyRowids = append(keys, exactKey(d.ID), exactKey(d.Name)), append(keyRowids, rowids[i], rowids[i])
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO search (rowid, id, name, description, author, categories, kind, updated_at, downloads, doc)
		SELECT r, i, n, de, a, c, k, u, dl,
			setweight(to_tsvector('simple', ti), 'A') || setweight(to_tsvector('simple', tn), 'B') ||
			setweight(to_tsvector('simple', tde), 'D') || setweight(to_tsvector('simple', ta), 'C') ||
			setweight(to_tsvector('simple', tc), 'C')
		FROM unnest(?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[],
			?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) AS t (r, i, n, de, a, c, k, u, dl, ti, tn, tde, ta, tc)`,
		rowids, text[0], text[1], text[2], text[3], text[4], text[5], text[6], downloads,
		text[7], text[8], text[9], text[10], text[11])
	if err != nil {
		return fmt.Errorf("store: search insert %d rows from %s: %w", len(docs), docs[0].ID, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO search_keys (key, search_rowid) SELECT * FROM unnest(?::text[], ?::bigint[])
		ON CONFLICT DO NOTHING`, keys, keyRowids); err != nil {
		return fmt.Errorf("store: search keys insert %d rows from %s: %w", len(docs), docs[0].ID, err)
	}
	return nil
}

// replaced merges the GIN index's pending list (where fast updates queue new rows, and
// which every search scans linearly until a vacuum merges it: at 50k fresh rows a rare
// word took 15 ms instead of 0.5) and refreshes the planner's statistics (whether a word
// is common, walk the rowid order, or rare, ask the index, is read from them), rather
// than waiting for autovacuum to do both.
func (pgSearch) replaced(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, "SELECT gin_clean_pending_list('search_doc')"); err != nil {
		return fmt.Errorf("store: merge the search index: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "ANALYZE search"); err != nil {
		return fmt.Errorf("store: analyze search: %w", err)
	}
	return nil
}

func (pgSearch) rowidsOf(id string) (string, []any) {
	return "SELECT rowid FROM search WHERE id = ? ORDER BY rowid", []any{id}
}

// text matches whole words with websearch_to_tsquery (each word quoted, so that "or" and
// "-" are words, never operators) and prefixes with to_tsquery's :* (websearch has none),
// as FTS5 matches "word" and "word"*. The category is left to categoryLike: the literal
// match implies the phrase SQLite also asks its index for.
func (pgSearch) text(words []string, whole bool, _ string, lo, hi int64) (string, []any) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = pgFold(w)
	}
	if whole {
		return "search, websearch_to_tsquery('simple', ?) AS q WHERE doc @@ q AND rowid >= ? AND rowid < ?",
			[]any{`"` + strings.Join(terms, `" "`) + `"`, lo, hi}
	}
	return "search, to_tsquery('simple', ?) AS q WHERE doc @@ q AND rowid >= ? AND rowid < ?",
		[]any{"'" + strings.Join(terms, "':* & '") + "':*", lo, hi}
}

// read runs a search's queries in a read-only transaction planned for their arguments
// (plan_cache_mode force_custom_plan): whether to walk the rowid order until the window
// is full (a common word) or to ask the GIN index (a rare one) depends on the word, and
// the generic plan a cached statement falls back to after five runs picks one of the two
// for every word (measured at 50k rows: a common word 30 → 90 ms, an absent one 0.3 →
// 10 ms). The one snapshot also keeps the count, the window and the exact matches of one
// search consistent with each other.
func (pgSearch) read(ctx context.Context, db *sql.DB, fn func(searchReader) error) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("store: search: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "SET LOCAL plan_cache_mode = force_custom_plan"); err != nil {
		return fmt.Errorf("store: search: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: search: %w", err)
	}
	return nil
}

// window ranks the rows after the LIMIT: when the planner misjudges a prefix (one of ids
// or numbers, each too rare for the statistics, as '0':* of ids bench-0NNNNN) it reads the
// matches through the GIN index and sorts them, and cols before the LIMIT would rank every
// match, not the window's (at 50k rows of which every one matched: 118 ms, then 47).
func (pgSearch) window(cols, src string) string {
	return "SELECT " + cols + " FROM (SELECT rowid, id, name, categories, updated_at, downloads, doc, q FROM " + src +
		" ORDER BY rowid LIMIT ?) AS m ORDER BY rowid"
}

// score is ts_rank with the column weights (D, C, B, A) = (1, 2, 5, 10)/10, divided by
// 1 + the log of the row's length (normalization 1), as bm25 favours short rows; negated,
// as bm25 is, so that lower is more relevant.
func (pgSearch) score() string     { return "-ts_rank('{0.1, 0.2, 0.5, 1.0}', doc, q, 1)::float8" }
func (pgSearch) noScore() string   { return "0.0::float8" }
func (pgSearch) downloads() string { return "downloads" }

// keyed is a semi-join the planner can start from search_keys' primary key.
func (pgSearch) keyed() string {
	return "rowid IN (SELECT search_rowid FROM search_keys WHERE key = ?)"
}

// categoryLike is ILIKE: SQLite's LIKE ignores the case of ASCII letters, and so does
// ILIKE on the column's "C" collation (and only of those, as LIKE).
func (pgSearch) categoryLike() string {
	return `(' ' || categories || ' ') ILIKE ? ESCAPE '\'`
}

// pgText is s as the words SQLite's tokenizer indexes, folded (pgFold), one space apart.
func pgText(s string) string {
	words := ftsWords(s)
	for i, w := range words {
		words[i] = pgFold(w)
	}
	return strings.Join(words, " ")
}

// pgFold folds a word as unicode61 remove_diacritics 2 does: lower case, combining marks
// removed ("Übersicht" → "ubersicht").
func pgFold(w string) string {
	d := norm.NFD.String(strings.ToLower(w))
	d = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, d)
	return norm.NFC.String(d)
}
