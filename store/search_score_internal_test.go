package store

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// scoreDocs are n search rows of varied lengths and texts, word in some columns of some
// rows (never in all: its IDF stays above FTS5's floor), with capitals and punctuation, and
// unless ascii, accents and other scripts.
func scoreDocs(n int, word string, ascii bool) []SearchDoc {
	rng := rand.New(rand.NewPCG(7, 11))
	fill := []string{"alpha", "Beta", "gamma-ray", "vu", "UBER", "42", "x1", "cafe", "plugin", "(schon)", "a_b"}
	if !ascii {
		fill = append(fill, "déjà", "ÜBER", "naïve", "½", "x²", "ΣΊΣΥΦΟΣ", "wor\u0591kflow", "كِتَاب")
	}
	text := func(max int, withWord bool) string {
		var w []string
		for range rng.IntN(max) + 1 {
			w = append(w, fill[rng.IntN(len(fill))])
		}
		if withWord {
			forms := []string{word, strings.ToUpper(word), strings.Title(word) + ",", "(" + word + ")", word + "s"} //nolint:staticcheck // ASCII
			for range rng.IntN(3) + 1 {
				w = slices.Insert(w, rng.IntN(len(w)+1), forms[rng.IntN(len(forms))])
			}
		}
		return strings.Join(w, " ")
	}
	now := time.Now()
	docs := make([]SearchDoc, n)
	for i := range docs {
		has := rng.IntN(5) < 2 // two rows in five hold the word: more than SearchCap, less than half
		col := rng.IntN(5)
		d := SearchDoc{ID: fmt.Sprintf("pkg-%05d", i), Name: text(4, has && col == 1), Description: text(40, has && (col == 2 || col == 0)),
			Author: text(3, has && col == 3), Categories: []string{"tools"}, Kind: "plugin",
			UpdatedAt: now.Add(-time.Duration(rng.IntN(5000)) * time.Minute), Downloads: int64(rng.IntN(5000))}
		if has && col == 0 {
			d.ID = fmt.Sprintf("pkg-%s-%05d", word, i)
		}
		if i%5 < 2 { // a category of two rows in five
			d.Categories = append(d.Categories, "chat")
		}
		if has && col == 4 {
			d.Categories = append(d.Categories, word)
		}
		docs[i] = d
	}
	return docs
}

// openScoreStore is an empty SQLite store, closed with the test.
func openScoreStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestScoredWindowIsBM25: the window of a common word scored in Go is FTS5's bm25 over
// the same rows divided by the word's IDF, row for row, so it orders the window as bm25
// does: the split and folding of words, the weights, the row lengths and the table's
// totals are FTS5's.
func TestScoredWindowIsBM25(t *testing.T) {
	sqliteOnly(t, "compares with FTS5's bm25")
	ctx := context.Background()
	s := openScoreStore(t)
	const word = "workflow"
	if err := s.ReplaceSearch(ctx, scoreDocs(SearchCap*8, word, true)); err != nil {
		t.Fatal(err)
	}
	dl := ftsSearch{}
	q := SearchQuery{Q: word}
	src, args := textWhere(dl, q, true)
	got, ok, err := dl.scoredWindow(ctx, s.r, termOf(word, false), src, slices.Clone(args))
	if err != nil || !ok {
		t.Fatalf("scoredWindow: ok %v, %v", ok, err)
	}
	want, err := windowOf(ctx, s.r, dl, "", src, slices.Clone(args))
	if err != nil {
		t.Fatal(err)
	}
	var nRow, nHit float64
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM search").Scan(&nRow); err != nil {
		t.Fatal(err)
	}
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM search WHERE search MATCH ?", `"`+word+`"`).Scan(&nHit); err != nil {
		t.Fatal(err)
	}
	idf := math.Log((nRow - nHit + 0.5) / (nHit + 0.5))
	if idf <= 0 || len(got) != SearchCap+1 || len(want) != len(got) {
		t.Fatalf("fixture: idf %v, %d and %d rows (want %d)", idf, len(got), len(want), SearchCap+1)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.id != w.id || g.categories != w.categories || math.Abs(g.score*idf-w.score) > 1e-9*math.Abs(w.score) {
			t.Fatalf("row %d: Go %s %q %.12g (×IDF %.12g), bm25 %s %q %.12g", i, g.id, g.categories, g.score, g.score*idf, w.id, w.categories, w.score)
		}
	}
	// A word typed with an accent matches the ASCII rows that hold it unaccented, and is left
	// to bm25: its folding here is not certainly FTS5's.
	if _, ok, err := dl.scoredWindow(ctx, s.r, termOf("wörkflöw", false), src, slices.Clone(args)); err != nil || ok {
		t.Errorf("a word that is not ASCII: scoredWindow ok %v, %v; want it to give up", ok, err)
	}
	// The searches themselves, through the Go scores (one word) or bm25 (two words, a
	// category: IDF then weighs the phrases), are in bm25's order. No name is "workflow
	// ray" (an exact match would come first).
	// Sorts other than relevance read no score.
	for _, q := range []SearchQuery{{Q: word}, {Q: word, Kind: "plugin"}, {Q: word + " ray"}, {Q: word, Category: "chat"},
		{Q: word, Sort: "downloads"}, {Q: word, Sort: "name"}, {Q: word, Sort: "recent"}} {
		q.Limit = 60
		src, args := textWhere(dl, q, true)
		want, err := windowOf(ctx, s.r, dl, q.Sort, src, args)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != SearchCap+1 {
			t.Fatalf("%+v: a window of %d rows, want more than SearchCap", q, len(want))
		}
		want = want[:SearchCap] // the last row only says "more"
		slices.SortFunc(want, searchRowOrder(q.Sort))
		res, err := s.SearchCounted(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.IDs) != q.Limit {
			t.Fatalf("%+v: %d results", q, len(res.IDs))
		}
		for i, id := range res.IDs {
			if id != want[i].id {
				t.Fatalf("%+v: result %d is %s, bm25 orders %s there", q, i, id, want[i].id)
			}
		}
	}
}

// TestScoredPrefixWindowIsBM25: a word of at most SearchCap rows is matched as a prefix
// ("workflow" also finds "workflows"), and its Go scores order the rows as bm25 does.
func TestScoredPrefixWindowIsBM25(t *testing.T) {
	sqliteOnly(t, "compares with FTS5's bm25")
	ctx := context.Background()
	s := openScoreStore(t)
	if err := s.ReplaceSearch(ctx, scoreDocs(SearchCap, "workflow", true)); err != nil {
		t.Fatal(err)
	}
	dl := ftsSearch{}
	for _, w := range []string{"workflow", "work", "caf", "ga"} {
		q := SearchQuery{Q: w, Limit: 40}
		whole, wargs := textWhere(dl, q, true)
		if n, err := windowCount(ctx, s.r, whole, wargs); err != nil || n > SearchCap {
			t.Fatalf("%s: %d whole-word matches (%v), want at most SearchCap", w, n, err)
		}
		src, args := textWhere(dl, q, false)
		want, err := windowOf(ctx, s.r, dl, "", src, slices.Clone(args))
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := dl.scoredWindow(ctx, s.r, termOf(w, true), src, slices.Clone(args))
		if err != nil || !ok {
			t.Fatalf("%s: scoredWindow: ok %v, %v", w, ok, err)
		}
		if len(got) != len(want) || len(got) < 100 {
			t.Fatalf("%s: %d rows scored, bm25 %d (want the same, at least 100)", w, len(got), len(want))
		}
		idf := idfOf(want, got)
		for i := range got {
			if got[i].id != want[i].id || math.Abs(got[i].score*idf-want[i].score) > 1e-9*math.Abs(want[i].score) {
				t.Fatalf("%s row %d: Go %s %.12g, bm25 %s %.12g", w, i, got[i].id, got[i].score, want[i].id, want[i].score)
			}
		}
		slices.SortFunc(want, searchRowOrder(""))
		res, err := s.SearchCounted(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range res.IDs {
			if id != want[i].id {
				t.Fatalf("%s: result %d is %s, bm25 orders %s there", w, i, id, want[i].id)
			}
		}
	}
}

// idfOf is the factor between bm25's scores and the Go ones (the IDF), from the first row
// with a score.
func idfOf(want, got []searchRow) float64 {
	for i := range got {
		if got[i].score != 0 {
			return want[i].score / got[i].score
		}
	}
	return 1
}

// TestScoredWindowGivesUpOnOtherText: a window holding a row of text other than ASCII
// (accents, Greek, a mark inside a word, Arabic), or a word that is not ASCII, is scored by
// bm25, and the search's order is bm25's.
func TestScoredWindowGivesUpOnOtherText(t *testing.T) {
	sqliteOnly(t, "compares with FTS5's bm25")
	ctx := context.Background()
	s := openScoreStore(t)
	if err := s.ReplaceSearch(ctx, scoreDocs(SearchCap*4, "workflow", false)); err != nil {
		t.Fatal(err)
	}
	dl := ftsSearch{}
	for _, w := range []string{"workflow", "naive", "déjà"} {
		q := SearchQuery{Q: w, Limit: 200}
		src, args := textWhere(dl, q, true)
		n, err := windowCount(ctx, s.r, src, args)
		if err != nil || n <= SearchCap {
			t.Fatalf("%s: %d whole-word matches (%v), want a window", w, n, err)
		}
		if _, ok, err := dl.scoredWindow(ctx, s.r, termOf(w, false), src, slices.Clone(args)); err != nil || ok {
			t.Fatalf("%s: scoredWindow ok %v, %v; want it to give up", w, ok, err)
		}
		want, err := windowOf(ctx, s.r, dl, "", src, slices.Clone(args))
		if err != nil {
			t.Fatal(err)
		}
		want = want[:min(len(want), SearchCap)]
		slices.SortFunc(want, searchRowOrder(""))
		res, err := s.SearchCounted(ctx, q)
		if err != nil || len(res.IDs) != q.Limit {
			t.Fatalf("%s: %v, %v", w, res.IDs, err)
		}
		exact, err := exactRows(ctx, s.r, dl, q) // a name "déjà" comes first, then the window
		if err != nil {
			t.Fatal(err)
		}
		if len(exact) >= len(res.IDs)-20 {
			t.Fatalf("%s: %d exact matches of %d results", w, len(exact), len(res.IDs))
		}
		ids := res.IDs[len(exact):]
		want = slices.DeleteFunc(want, func(r searchRow) bool {
			return slices.ContainsFunc(exact, func(e searchRow) bool { return e.id == r.id })
		})
		for i, id := range ids {
			if id != want[i].id {
				t.Fatalf("%s: result %d is %s, bm25 orders %s there", w, i, id, want[i].id)
			}
		}
	}
}

// A one-word search answers on a table never written, emptied, or holding one row.
func TestScoredWindowSmallTables(t *testing.T) {
	sqliteOnly(t, "reads FTS5's averages record")
	ctx := context.Background()
	s := openScoreStore(t)
	search := func(want int) {
		t.Helper()
		for _, q := range []string{"hello", "hel", "nothing"} {
			res, err := s.SearchCounted(ctx, SearchQuery{Q: q, Limit: 10})
			if err != nil {
				t.Fatalf("search %q: %v", q, err)
			}
			if q != "nothing" && len(res.IDs) != want {
				t.Errorf("search %q: %v, want %d results", q, res.IDs, want)
			}
		}
	}
	search(0)
	if err := s.ReplaceSearch(ctx, nil); err != nil {
		t.Fatal(err)
	}
	search(0)
	doc := SearchDoc{ID: "hello-world", Name: "Hello", Description: "says hello", Kind: "plugin", UpdatedAt: time.Now()}
	if err := s.ReplaceSearch(ctx, []SearchDoc{doc}); err != nil {
		t.Fatal(err)
	}
	search(1)
	if err := s.DeleteSearch(ctx, []string{doc.ID}); err != nil {
		t.Fatal(err)
	}
	search(0)
}

// The tokenizer's edge on ASCII: words split at every character that is not a letter or a
// digit, folded for case.
func TestCountTokens(t *testing.T) {
	for _, tc := range []struct {
		s, word string
		n, hits int
		prefix  bool
	}{
		{"", "a", 0, 0, false},
		{"Workflow workflow,WORKFLOW-workflows", "workflow", 4, 3, false},
		{"x1 1x 42", "42", 3, 1, false},
		{"  a_b (c)d.e  ", "b", 5, 1, false},
		{"Workflow workflows work WORKING", "work", 4, 4, true},
		{"Workflow workflows work WORKING", "workf", 4, 2, true},
		{"wo wor", "work", 2, 0, true},
	} {
		n, hits := countTokens([]byte(tc.s), termOf(tc.word, tc.prefix))
		if n != tc.n || hits != tc.hits {
			t.Errorf("countTokens(%q, %q) = %d, %d; want %d, %d", tc.s, tc.word, n, hits, tc.n, tc.hits)
		}
	}
}

func TestSQLiteVarint(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		v    uint64
		size int
	}{
		{[]byte{0x05}, 5, 1},
		{[]byte{0x81, 0x00}, 128, 2},
		{[]byte{0xff, 0x7f}, 16383, 2},
		{[]byte{0x81, 0x80, 0x00}, 16384, 3},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, math.MaxUint64, 9},
		{[]byte{0x81}, 0, 0},
		{nil, 0, 0},
	} {
		if v, size := sqliteVarint(tc.b); v != tc.v || size != tc.size {
			t.Errorf("sqliteVarint(% x) = %d, %d; want %d, %d", tc.b, v, size, tc.v, tc.size)
		}
	}
}

// compareASCIILower orders as comparing the ASCII-lower-cased strings does.
func TestCompareASCIILower(t *testing.T) {
	lower := func(s string) string {
		return strings.Map(func(r rune) rune {
			if 'A' <= r && r <= 'Z' {
				return r + 'a' - 'A'
			}
			return r
		}, s)
	}
	alphabet := []string{"a", "A", "b", "Z", "z", "_", "[", "`", "é", "É", "1", ""}
	rng := rand.New(rand.NewPCG(3, 5))
	word := func() string {
		var b strings.Builder
		for range rng.IntN(5) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 20000 {
		a, b := word(), word()
		if got, want := compareASCIILower(a, b), strings.Compare(lower(a), lower(b)); got != want {
			t.Fatalf("compareASCIILower(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

// TestScoredWindowGivesUpOnTheSeparator: the window's columns come joined by the unit
// separator; a row whose text holds it cannot be split back, and the window goes to bm25
// rather than scoring columns that are not the row's.
func TestScoredWindowGivesUpOnTheSeparator(t *testing.T) {
	sqliteOnly(t, "reads FTS5's content table")
	ctx := context.Background()
	dl := ftsSearch{}
	for _, sep := range []bool{false, true} {
		s := openScoreStore(t)
		docs := scoreDocs(SearchCap*2, "workflow", true)
		if sep {
			docs[0].Description += " \x1f workflow"
		}
		if err := s.ReplaceSearch(ctx, docs); err != nil {
			t.Fatal(err)
		}
		src, args := textWhere(dl, SearchQuery{Q: "workflow"}, true)
		if _, ok, err := dl.scoredWindow(ctx, s.r, termOf("workflow", false), src, slices.Clone(args)); err != nil || ok == sep {
			t.Errorf("separator in a row %v: scoredWindow ok %v, %v; want ok %v", sep, ok, err, !sep)
		}
	}
}

func TestSplitContent(t *testing.T) {
	var cols [len(ftsWeights)][]byte
	for _, tt := range []struct {
		row  string
		want []string // nil: refused
	}{
		{"id\x1fname\x1fdesc\x1fauthor\x1fcats", []string{"id", "name", "desc", "author", "cats"}},
		{"\x1f\x1f\x1f\x1f", []string{"", "", "", "", ""}},
		{"id\x1fname\x1fdesc\x1fauthor", nil},
		{"id\x1fname\x1fde\x1fsc\x1fauthor\x1fcats", nil},
		{"\x1f\x1f\x1f\x1f\x1f\x1f\x1f", nil},
		{"", nil},
	} {
		ok := splitContent([]byte(tt.row), &cols)
		if ok != (tt.want != nil) {
			t.Errorf("%q: ok %v", tt.row, ok)
			continue
		}
		for i, w := range tt.want {
			if string(cols[i]) != w {
				t.Errorf("%q: column %d %q, want %q", tt.row, i, cols[i], w)
			}
		}
	}
}
