package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
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

// SearchCap bounds the work of one text search: a search counts its matches up to
// SearchCap (a total of SearchCap+1 means "more than SearchCap") and, when there are more,
// ranks and sorts the SearchCap most downloaded of them (plus any exact id or name match),
// so its cost does not grow with the catalogue.
const SearchCap = 1000

// bandBits is the width of one kind's rowid band (see migrations/0011_search_bands.sql).
const bandBits = 40

// kindBand is the rowid band of kind: rows of that kind have rowids in [lo, hi).
func kindBand(kind string) (lo, hi int64) {
	b := int64(4)
	switch kind {
	case "plugin":
		b = 1
	case "canvas":
		b = 2
	case "extension":
		b = 3
	}
	return b << bandBits, (b + 1) << bandBits
}

// ReplaceSearch replaces the whole search table with docs (the last of each id), in one
// transaction. Rowids are numbered within each kind's band, most downloaded first.
func (s *Store) ReplaceSearch(ctx context.Context, docs []SearchDoc) error {
	docs = lastPerID(docs)
	slices.SortStableFunc(docs, func(a, b SearchDoc) int {
		return cmp.Or(cmp.Compare(b.Downloads, a.Downloads), strings.Compare(a.ID, b.ID))
	})
	next := map[int64]int64{}
	rowids := make([]int64, len(docs))
	for i, d := range docs {
		lo, _ := kindBand(d.Kind)
		next[lo]++
		rowids[i] = lo + next[lo]
	}
	dl := s.searchSQL()
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM search"); err != nil {
			return fmt.Errorf("store: clear search: %w", err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM search_keys"); err != nil {
			return fmt.Errorf("store: clear search keys: %w", err)
		}
		if err := dl.insert(ctx, tx, docs, rowids); err != nil {
			return err
		}
		return dl.replaced(ctx, tx)
	})
}

// UpsertSearch inserts the rows of docs, replacing any row already there for the same id,
// in one transaction: an incremental build changes the rows of the packages it touched and
// leaves the others alone (ReplaceSearch is for full rebuilds). A replaced row keeps its
// rowid, so its place in the download order of the last full rebuild; a new one goes last
// in its kind's band.
func (s *Store) UpsertSearch(ctx context.Context, docs []SearchDoc) error {
	dl := s.searchSQL()
	return s.tx(ctx, func(tx *sql.Tx) error {
		rowids := make([]int64, len(docs))
		for i, d := range docs {
			old, err := deleteSearchID(ctx, tx, dl, d.ID)
			if err != nil {
				return err
			}
			if lo, hi := kindBand(d.Kind); old >= lo && old < hi {
				rowids[i] = old
			} else if rowids[i], err = nextRowid(ctx, tx, lo, hi); err != nil {
				return err
			}
			if err := dl.insert(ctx, tx, docs[i:i+1], rowids[i:i+1]); err != nil {
				return err
			}
		}
		return nil
	})
}

// searchRowids are the rowids of id's rows in rowid order, none when it has none.
func searchRowids(ctx context.Context, tx *sql.Tx, dl searchSQL, id string) ([]int64, error) {
	query, args := dl.rowidsOf(id)
	rowids, err := queryRowids(ctx, tx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search rowid %s: %w", id, err)
	}
	return rowids, nil
}

// queryRowids reads the one integer column of query's rows: the rowids of search rows.
func queryRowids(ctx context.Context, rd searchReader, query string, args ...any) ([]int64, error) {
	rows, err := rd.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var rowid int64
		if err := rows.Scan(&rowid); err != nil {
			return nil, err
		}
		out = append(out, rowid)
	}
	return out, rows.Err()
}

// nextRowid is one past the last rowid of the band [lo, hi).
func nextRowid(ctx context.Context, tx *sql.Tx, lo, hi int64) (int64, error) {
	var last int64
	err := tx.QueryRowContext(ctx, "SELECT rowid FROM search WHERE rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT 1", lo, hi).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return lo + 1, nil
	case err != nil:
		return 0, fmt.Errorf("store: search band: %w", err)
	}
	return last + 1, nil
}

// lastPerID keeps the last doc of each id, in order: one row per package, as a sequence of
// upserts leaves.
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
	dl := s.searchSQL()
	return s.tx(ctx, func(tx *sql.Tx) error { return deleteSearchRows(ctx, tx, dl, ids) })
}

// deleteSearchRows deletes the rows whose id is one of ids (deleteSearchID).
func deleteSearchRows(ctx context.Context, tx *sql.Tx, dl searchSQL, ids []string) error {
	for _, id := range ids {
		if _, err := deleteSearchID(ctx, tx, dl, id); err != nil {
			return err
		}
	}
	return nil
}

// deleteSearchID deletes every row of id and its keys, found by one searchRowids (a
// lookup, not a scan of the catalogue): the store keeps one row per id (ReplaceSearch
// keeps the last doc of each, UpsertSearch deletes before it inserts), so that is one
// lookup and one delete of the row and of its keys, and a table an older version left
// several rows of an id in loses them all. It returns the lowest rowid it deleted, 0 when
// id had no row.
func deleteSearchID(ctx context.Context, tx *sql.Tx, dl searchSQL, id string) (first int64, err error) {
	rowids, err := searchRowids(ctx, tx, dl, id)
	if err != nil || len(rowids) == 0 {
		return 0, err
	}
	for _, rowid := range rowids {
		if _, err := tx.ExecContext(ctx, "DELETE FROM search WHERE rowid = ?", rowid); err != nil {
			return 0, fmt.Errorf("store: search delete %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM search_keys WHERE search_rowid = ?", rowid); err != nil {
			return 0, fmt.Errorf("store: search keys delete %s: %w", id, err)
		}
	}
	return rowids[0], nil
}

// searchWhere is the WHERE condition of a search q without text (its kind and category)
// and its arguments.
func searchWhere(dl searchSQL, q SearchQuery) (string, []any) {
	where, args := []string{"1 = 1"}, []any{}
	if q.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, q.Kind)
	}
	if q.Category != "" {
		where = append(where, dl.categoryLike())
		args = append(args, "% "+likeEscape(q.Category)+" %")
	}
	return strings.Join(where, " AND "), args
}

// Search returns the ids matching q in order, and the total number of matches. A
// package whose id or name equals the text comes first. A text search is bounded (see
// SearchCap): its total is at most SearchCap+1, and past SearchCap matches it orders the
// SearchCap most downloaded. Without text it counts and sorts every match: listings
// without text are served from the catalog's precomputed orders instead.
func (s *Store) Search(ctx context.Context, q SearchQuery) ([]string, int, error) {
	if hasText(q.Q) {
		return s.searchText(ctx, q)
	}
	dl := s.searchSQL()
	cond, args := searchWhere(dl, q)
	var total int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM search WHERE "+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("store: search count: %w", err)
	}
	query := "SELECT id FROM search WHERE " + cond + " ORDER BY " + archivedLastSQL + ", " + searchOrder(dl, q.Sort) + " LIMIT ? OFFSET ?"
	ids, err := s.searchIDs(ctx, query, append(args, q.Limit, q.Offset)...)
	return ids, total, err
}

// textWhere is the source (FROM …, WHERE …) of a text search q: its words as prefixes
// or, with whole, as whole words, the category (through the text index where the dialect
// can, then literally) and the kind (its rowid band), all answered by the text index.
func textWhere(dl searchSQL, q SearchQuery, whole bool) (string, []any) {
	lo, hi := queryBand(q)
	return textIn(dl, q, whole, lo, hi)
}

// queryBand is the rowid band of q's kind, every row's without one.
func queryBand(q SearchQuery) (lo, hi int64) {
	if q.Kind != "" {
		return kindBand(q.Kind)
	}
	return 0, int64(1) << 62
}

// textIn is textWhere for the rowids [lo, hi).
func textIn(dl searchSQL, q SearchQuery, whole bool, lo, hi int64) (string, []any) {
	src, args := dl.text(searchWords(q.Q), whole, q.Category, lo, hi)
	if q.Category != "" {
		src += " AND " + dl.categoryLike()
		args = append(args, "% "+likeEscape(q.Category)+" %")
	}
	return src, args
}

// searchRow is one match of a text search, with what ordering it needs.
type searchRow struct {
	id, name, categories, updatedAt string
	downloads                       int64
	score                           float64 // bm25: lower is more relevant
}

// searchRowCols are the columns of a searchRow, in its order, for a search in sort: the
// relevance score only for relevance (scoring reads the term's every match, for its
// rarity).
func searchRowCols(dl searchSQL, sort string) string {
	score := dl.noScore()
	if relevanceSort(sort) {
		score = dl.score()
	}
	return "id, name, categories, updated_at, " + dl.downloads() + ", " + score
}

// searchWindow is the first SearchCap+1 matches of q in rowid order (in each kind's band,
// most downloaded first), scoring only the rows it returns. Whole words are tried first:
// the index streams their matches, so a common word costs SearchCap rows however many
// packages it is in, where a prefix term makes the index merge every match first. Only
// when whole words match SearchCap packages or fewer do its words match as prefixes too
// (the search box's "as you type"), so the window holds every whole-word match or more
// than SearchCap of them. Which pass it is, is decided by counting the whole-word matches
// up to SearchCap+1 by rowid alone (the index, no row read), so the rows are read and
// scored once.
func searchWindow(ctx context.Context, rd searchReader, dl searchSQL, q SearchQuery) ([]searchRow, error) {
	src, args := textWhere(dl, q, true)
	n, err := windowCount(ctx, rd, src, args)
	if err != nil {
		return nil, err
	}
	prefix := n <= SearchCap
	if prefix {
		src, args = textWhere(dl, q, false)
	}
	if ws, ok := dl.(windowScorer); ok && relevanceSort(q.Sort) && q.Category == "" {
		if words := searchWords(q.Q); len(words) == 1 {
			if rows, ok, err := ws.scoredWindow(ctx, rd, termOf(words[0], prefix), src, args); ok || err != nil {
				return rows, err
			}
		}
	}
	return windowOf(ctx, rd, dl, q.Sort, src, args)
}

// windowScorer is a dialect that scores the window of a one-word search itself, at less
// cost than its score() (ftsSearch.scoredWindow).
type windowScorer interface {
	scoredWindow(ctx context.Context, rd searchReader, t term, src string, args []any) (_ []searchRow, ok bool, _ error)
}

// relevanceSort reports whether sort orders by relevance (every sort but name, recent and
// downloads, as searchRowCols has it).
func relevanceSort(sort string) bool {
	switch sort {
	case "name", "recent", "downloads":
		return false
	}
	return true
}

// windowCount is the number of matches of src, up to SearchCap+1.
func windowCount(ctx context.Context, rd searchReader, src string, args []any) (int, error) {
	var n int
	query := "SELECT count(*) FROM (SELECT rowid FROM " + src + " ORDER BY rowid LIMIT ?) AS m"
	if err := rd.QueryRowContext(ctx, query, append(slices.Clone(args), SearchCap+1)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: search count: %w", err)
	}
	return n, nil
}

// windowOf is the first SearchCap+1 rows of src in rowid order, with the columns sort needs.
func windowOf(ctx context.Context, rd searchReader, dl searchSQL, sort, src string, args []any) ([]searchRow, error) {
	return searchRows(ctx, rd, dl.window(windowCols(dl, sort), src), append(args, SearchCap+1)...)
}

// windowCols are searchRowCols for the window's rows, with a constant for each column
// sort does not order by: the window's rows are only ordered, paged and counted by
// category (exactRows reads the name it compares), and converting a name, a time and a
// count for each of the SearchCap+1 rows of a common word is work thrown away.
func windowCols(dl searchSQL, sort string) string {
	name, updated, downloads, score := "''", "''", "0", dl.noScore()
	switch sort {
	case "name":
		name = "name"
	case "recent":
		updated = "updated_at"
	case "downloads":
		downloads = dl.downloads()
	default:
		score = dl.score()
	}
	return "id, " + name + ", categories, " + updated + ", " + downloads + ", " + score
}

func searchRows(ctx context.Context, rd searchReader, query string, args ...any) ([]searchRow, error) {
	rows, err := rd.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	var out []searchRow
	for rows.Next() {
		var r searchRow
		if err := rows.Scan(&r.id, &r.name, &r.categories, &r.updatedAt, &r.downloads, &r.score); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// searchRowOrder compares rows in the order sort names (relevance: the dialect's score,
// lower first), ties by id.
func searchRowOrder(sort string) func(a, b searchRow) int {
	return func(a, b searchRow) int {
		var c int
		switch sort {
		case "name":
			c = compareASCIILower(a.name, b.name)
		case "recent":
			c = strings.Compare(b.updatedAt, a.updatedAt)
		case "downloads":
			c = cmp.Compare(b.downloads, a.downloads)
		default:
			c = cmp.Compare(a.score, b.score)
		}
		return cmp.Or(c, strings.Compare(a.id, b.id))
	}
}

// compareASCIILower compares a and b lower-cased as SQLite's lower() does (ASCII letters
// only), without making either: a sort by name compares each row many times.
func compareASCIILower(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(len(a), len(b))
}

// exactKey is what an exact match compares: the text lower-cased, every letter (a search
// for "übersicht" finds the display name "Übersicht"), not only ASCII as SQLite's lower().
func exactKey(s string) string { return strings.ToLower(s) }

// exactRows are the matches of q whose id or name is the text (lower-cased), found
// through search_keys (a lookup, however many ids or names start with the text) and
// checked against q (text, kind, category) in one query however many packages share the
// name: the SearchCap first in rowid order (the most downloaded of each kind), as the
// window holds the SearchCap first of the other matches. One match is read unscored (one
// row needs no score to be ordered, and a score reads every match of each word).
func exactRows(ctx context.Context, rd searchReader, dl searchSQL, q SearchQuery) ([]searchRow, error) {
	if !hasText(q.Q) {
		return nil, nil
	}
	exact := exactKey(strings.TrimSpace(q.Q))
	lo, hi := queryBand(q)
	rowids, err := exactRowids(ctx, rd, exact, lo, hi)
	if err != nil || len(rowids) == 0 {
		return nil, err
	}
	sort := q.Sort
	if len(rowids) == 1 {
		sort, hi = "name", rowids[0]+1 // that row alone, unscored
	}
	src, args := textIn(dl, q, false, rowids[0], hi) // from the first exact match on
	rows, err := searchRows(ctx, rd, "SELECT "+searchRowCols(dl, sort)+" FROM "+src+" AND "+dl.keyed()+" ORDER BY rowid LIMIT ?",
		append(args, exact, SearchCap)...)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(rows, func(r searchRow) bool {
		return exactKey(r.id) != exact && exactKey(r.name) != exact // a stale key, not the row's
	}), nil
}

// exactRowids are the first two rowids, in [lo, hi), of the search rows whose lower-cased
// id or name is key: whether there is none, one (which) or more is all exactRows asks.
func exactRowids(ctx context.Context, rd searchReader, key string, lo, hi int64) ([]int64, error) {
	rowids, err := queryRowids(ctx, rd, `SELECT search_rowid FROM search_keys WHERE key = ? AND search_rowid >= ? AND search_rowid < ?
		ORDER BY search_rowid LIMIT 2`, key, lo, hi)
	if err != nil {
		return nil, fmt.Errorf("store: search keys: %w", err)
	}
	return rowids, nil
}

// searchText answers a text search in bounded work: the exact matches (id or name equal
// to the text), then the other matches of the window, ranked or sorted, paged across both.
func (s *Store) searchText(ctx context.Context, q SearchQuery) ([]string, int, error) {
	res, err := s.searchTextCounted(ctx, q, false)
	return res.IDs, res.Total, err
}

// SearchResult is one page of a search: its ids, the total (at most SearchCap+1 for a
// text search), and, when asked for, the category counts CategoryCounts would return.
type SearchResult struct {
	IDs     []string
	Total   int
	Counts  map[string]int
	Partial bool // the counts stopped at SearchCap matches: each is a lower bound
}

// SearchCounted is Search and CategoryCounts of q together; a text search without a
// category filter reads its matches once for both.
func (s *Store) SearchCounted(ctx context.Context, q SearchQuery) (SearchResult, error) {
	if !hasText(q.Q) || q.Category != "" {
		ids, total, err := s.Search(ctx, q)
		if err != nil {
			return SearchResult{}, err
		}
		counts, partial, err := s.CategoryCounts(ctx, q)
		return SearchResult{IDs: ids, Total: total, Counts: counts, Partial: partial}, err
	}
	return s.searchTextCounted(ctx, q, true)
}

func (s *Store) searchTextCounted(ctx context.Context, q SearchQuery, withCounts bool) (SearchResult, error) {
	var (
		win, first []searchRow
		archived   map[string]bool
	)
	dl := s.searchSQL()
	err := dl.read(ctx, s.r, func(rd searchReader) error {
		var err error
		if win, err = searchWindow(ctx, rd, dl, q); err != nil || len(win) == 0 {
			return err
		}
		if first, err = exactRows(ctx, rd, dl, q); err != nil {
			return err
		}
		archived, err = archivedIDs(ctx, rd)
		return err
	})
	if err != nil || len(win) == 0 {
		return SearchResult{Counts: map[string]int{}}, err
	}
	res := SearchResult{Total: len(win)}
	if withCounts {
		res.Counts, res.Partial = countCategories(win[:min(len(win), SearchCap)]), len(win) > SearchCap
	}
	order := archivedAfter(archived, searchRowOrder(q.Sort)) // archived.go
	slices.SortFunc(first, order)
	exact := make(map[string]bool, len(first)) // up to SearchCap of them, each looked up for each row of the window
	for _, r := range first {
		exact[r.id] = true
	}
	rest := slices.DeleteFunc(win[:min(len(win), SearchCap)], func(r searchRow) bool { return exact[r.id] }) // win is read no more
	slices.SortFunc(rest, order)
	all := rest
	if len(first) > 0 {
		all = append(first, rest...)
	}
	for _, r := range rowWindow(all, q.Offset, q.Limit) {
		res.IDs = append(res.IDs, r.id)
	}
	return res, nil
}

// rowWindow is rows[offset:offset+limit], clipped.
func rowWindow(rows []searchRow, offset, limit int) []searchRow {
	if offset < 0 || offset >= len(rows) || limit <= 0 {
		return nil
	}
	return rows[offset:min(len(rows), offset+limit)]
}

// countCategories counts each category once per row, as the category filter matches it.
func countCategories(rows []searchRow) map[string]int {
	counts := map[string]int{}
	for _, r := range rows {
		fields := strings.Fields(r.categories)
		for i, c := range fields {
			if !slices.Contains(fields[:i], c) {
				counts[c]++
			}
		}
	}
	return counts
}

func (s *Store) searchIDs(ctx context.Context, query string, args ...any) ([]string, error) {
	ids, err := queryStrings(ctx, s.r, query, args...) // copy_schema.go
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	return ids, nil
}

// CategoryCounts counts, per category, the packages matching q's free text and kind
// (q.Category, Sort, Limit and Offset are ignored): each count is the total that Search
// returns for q with that category. With text, it counts the SearchCap matches Search
// ranks, and partial reports that there were more (each count is then a lower bound).
func (s *Store) CategoryCounts(ctx context.Context, q SearchQuery) (counts map[string]int, partial bool, err error) {
	q.Category, q.Sort = "", "name" // no score needed to count
	if hasText(q.Q) {
		var win []searchRow
		dl := s.searchSQL()
		err := dl.read(ctx, s.r, func(rd searchReader) error {
			var err error
			win, err = searchWindow(ctx, rd, dl, q)
			return err
		})
		if err != nil {
			return nil, false, err
		}
		return countCategories(win[:min(len(win), SearchCap)]), len(win) > SearchCap, nil
	}
	cond, args := searchWhere(s.searchSQL(), q)
	rows, err := s.r.QueryContext(ctx, "SELECT categories FROM search WHERE "+cond, args...)
	if err != nil {
		return nil, false, fmt.Errorf("store: category counts: %w", err)
	}
	defer rows.Close()
	var all []searchRow
	for rows.Next() {
		var r searchRow
		if err := rows.Scan(&r.categories); err != nil {
			return nil, false, fmt.Errorf("store: category counts: %w", err)
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: category counts: %w", err)
	}
	return countCategories(all), false, nil
}

// likeEscaper escapes LIKE's wildcards (% and _) and the escape character itself, for a
// pattern written with ESCAPE '\': user input then matches only itself.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// likeEscape returns s as a LIKE pattern that matches s literally (with ESCAPE '\').
func likeEscape(s string) string { return likeEscaper.Replace(s) }

// searchOrder is the ORDER BY of a search without text in sort.
func searchOrder(dl searchSQL, sort string) string {
	switch sort {
	case "recent":
		return "updated_at DESC, id"
	case "downloads":
		return dl.downloads() + " DESC, id"
	}
	return "lower(name), id"
}

// hasText reports whether q holds a word: a search without one lists rather than matches.
func hasText(q string) bool { return len(ftsWords(q)) > 0 }

// SearchWords bounds the words of one text search: it matches the first SearchWords
// distinct words of its text (distinct as the index folds them: "Plugin" is "plugin",
// "café" is "cafe") and ignores the rest, rather than refusing the search (a pasted
// sentence still finds what its first words say). Each word costs its own pass over the
// index (a relevance score counts every match of each word), so a repeated word added cost
// and no condition: at 50k rows, 100 repeats of a word in every row cost 40 times the word
// alone. On SQLite, SearchWords one-letter prefixes, each of an initial shared by most rows,
// cost about 11 times a common word before the table indexed one-letter prefixes
// (migration 0020), about 3 times since, and a third more with a category (SearchCounted
// then reads the window with it, and the one without it for the counts;
// BenchmarkSearchHostile). The ignored words only widen the matches; a package whose id
// or name is the whole text is still an exact match and comes first.
const SearchWords = 8

// searchWords are the words a search matches of text s: each distinct word once, in
// order, the first SearchWords of them (see SearchWords).
func searchWords(s string) []string {
	var words []string
	seen := map[string]bool{}
	for _, w := range ftsWords(s) {
		if len(words) == SearchWords {
			break
		}
		if k := pgFold(w); !seen[k] { // pgFold: the index's folding (search_postgres.go)
			seen[k] = true
			words = append(words, w)
		}
	}
	return words
}

// ftsWords are the words of s as the index splits them (letters and digits).
func ftsWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
