package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// searchSQL is what the two dialects' search tables do differently; the rest of search
// (bands, keys, the bounded window, exact matches first, sorting and paging) is shared.
// SQLite's table is FTS5 (ftsSearch), PostgreSQL's a table with a tsvector column under
// a GIN index (pgSearch, search_postgres.go).
type searchSQL interface {
	// insert inserts one row per doc, docs[i] with rowid rowids[i], and its two keys
	// (exactKey of its id and name; a key already there is kept).
	insert(ctx context.Context, tx *sql.Tx, docs []SearchDoc, rowids []int64) error
	// replaced runs at the end of a full rebuild's transaction.
	replaced(ctx context.Context, tx *sql.Tx) error
	// rowidsOf is the query of the rowids of id's rows in rowid order (one row: the
	// store keeps one per id; every one of a table an older version left several in), and
	// its arguments.
	rowidsOf(id string) (string, []any)
	// text is the source of the rows matching words (as prefixes or, with whole, whole)
	// in the rowid band [lo, hi), and of the category's words where the index can say.
	text(words []string, whole bool, category string, lo, hi int64) (string, []any)
	// score is the relevance of a row of a text source (lower is more relevant); noScore
	// stands for it when the order needs none.
	score() string
	noScore() string
	// window is the query of cols (of a row of a text source, score included) for the
	// first rows of src in rowid order, as many as its last argument says.
	window(cols, src string) string
	// downloads is the downloads column as an integer.
	downloads() string
	// keyed is the condition of a text source's row being keyed by one argument (the
	// exactKey of an id or name): the exact matches among the source's rows.
	keyed() string
	// categoryLike is the condition of a category pattern (likeEscape'd, with ESCAPE '\').
	categoryLike() string
	// read runs the queries of one search on db.
	read(ctx context.Context, db *sql.DB, fn func(searchReader) error) error
}

// searchReader is what a search's queries run on: a pool or a transaction.
type searchReader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// searchSQL is the search dialect of the store's database.
func (s *Store) searchSQL() searchSQL {
	if s.dialect == Postgres {
		return pgSearch{}
	}
	return ftsSearch{}
}

// ftsSearch is SQLite's search table: FTS5 with the unicode61 tokenizer (diacritics
// removed), prefix indexes of 2 to 8 characters, rowids in kind bands (migrations 0001,
// 0011, 0012).
type ftsSearch struct{}

const (
	ftsInsertRow = `INSERT INTO search (rowid, id, name, description, author, categories, kind, updated_at, downloads)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	ftsInsertKeys = "INSERT OR IGNORE INTO search_keys (key, search_rowid) VALUES (?, ?), (?, ?)"
)

// insert runs the same two texts for every doc: the connection's statement cache
// (stmtCacheConn) compiles each once, for a full rebuild's thousands of docs and across
// the one-doc calls of UpsertSearch alike, which a tx.Prepare per call would compile again.
func (ftsSearch) insert(ctx context.Context, tx *sql.Tx, docs []SearchDoc, rowids []int64) error {
	for i, d := range docs {
		if _, err := tx.ExecContext(ctx, ftsInsertRow, rowids[i], d.ID, d.Name, d.Description, d.Author, strings.Join(d.Categories, " "),
			d.Kind, d.UpdatedAt.UTC().Format(time.RFC3339), d.Downloads); err != nil {
			return fmt.Errorf("store: search insert %s: %w", d.ID, err)
		}
		if _, err := tx.ExecContext(ctx, ftsInsertKeys, exactKey(d.ID), rowids[i], exactKey(d.Name), rowids[i]); err != nil {
			return fmt.Errorf("store: search keys insert %s: %w", d.ID, err)
		}
	}
	return nil
}

func (ftsSearch) replaced(context.Context, *sql.Tx) error { return nil }

// rowidsOf finds id through its key (exactKey, kept with the row: a B-tree lookup) and
// compares the row's id exactly, since a key is also another row's name (a package named
// after another's id) or the id of a row differing only in case. FTS5 has no index on id
// equality, and matching the phrase of id's words read every row holding its commonest
// word (every row, for ids plugin-NNNNNN). CROSS JOIN keeps search_keys the outer loop.
func (ftsSearch) rowidsOf(id string) (string, []any) {
	return `SELECT k.search_rowid FROM search_keys k CROSS JOIN search s ON s.rowid = k.search_rowid
		WHERE k.key = ? AND s.id = ? ORDER BY k.search_rowid`, []any{exactKey(id), id}
}

// text asks the index for the category's words too: a narrowing only, as categoryLike then
// matches the category literally. They are its distinct words (searchWords), each once, not
// its phrase: a category of 32 repeats of "a" (a word of every description, 63 bytes of the
// 64 the API takes) made a phrase of 32 passes over the whole index (at 50k rows, with
// "plugin": 131 ms of CPU; as distinct words, 9).
func (ftsSearch) text(words []string, whole bool, category string, lo, hi int64) (string, []any) {
	terms := ftsQuery(words)
	if whole {
		terms = wholeWords(words)
	}
	match := "(" + terms + ")"
	if cw := searchWords(category); len(cw) > 0 {
		match += " AND categories : (" + wholeWords(cw) + ")"
	}
	return "search WHERE search MATCH ? AND rowid >= ? AND rowid < ?", []any{match, lo, hi}
}

// window scores the rows of the match itself: bm25 is an FTS5 function of its cursor.
func (ftsSearch) window(cols, src string) string {
	return "SELECT " + cols + " FROM " + src + " ORDER BY rowid LIMIT ?"
}

func (ftsSearch) score() string     { return ftsScore() }
func (ftsSearch) noScore() string   { return "0.0" }
func (ftsSearch) downloads() string { return "CAST(downloads AS INTEGER)" }

// keyed filters the rows the MATCH streams (the unary + keeps the IN from the FTS5
// table's index constraints): as a rowid constraint, FTS5 would be asked for each keyed
// rowid in turn, starting every word's iterator and bm25's count of every match of each
// word again for each (a search for the name 1,000 packages share, at 50k rows: 480 ms
// of CPU by relevance, 77 ms by name; filtered, 13 and 11 ms).
func (ftsSearch) keyed() string {
	return "+rowid IN (SELECT search_rowid FROM search_keys WHERE key = ?)"
}

func (ftsSearch) categoryLike() string { return `(' ' || categories || ' ') LIKE ? ESCAPE '\'` }

// read runs fn on the reader pool.
func (ftsSearch) read(_ context.Context, db *sql.DB, fn func(searchReader) error) error {
	return fn(db)
}

// ftsQuery turns words into an FTS5 query: each word becomes a quoted prefix term, so
// user input can never be FTS syntax.
func ftsQuery(words []string) string {
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`"*`)
	}
	return strings.Join(terms, " ")
}

// wholeWords is words as whole-word terms.
func wholeWords(words []string) string {
	terms := make([]string, 0, len(words))
	for _, w := range words {
		terms = append(terms, `"`+w+`"`)
	}
	return strings.Join(terms, " ")
}
