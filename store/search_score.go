package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ftsWeights are the weights bm25 gives a match in each indexed column of the search
// table, in its order: id, name, description, author, categories.
var ftsWeights = [...]float64{10, 5, 1, 2, 2}

// ftsScore is bm25 with ftsWeights, as SQL.
func ftsScore() string {
	var b strings.Builder
	b.WriteString("bm25(search")
	for _, w := range ftsWeights {
		b.WriteString(", ")
		b.WriteString(strconv.FormatFloat(w, 'f', 1, 64))
	}
	b.WriteString(")")
	return b.String()
}

// The constants of FTS5's bm25.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scoredWindow is the window of a search for one word (src matches t in any column: the
// whole word, or as a prefix), scored here rather than by bm25(): FTS5's bm25 first counts
// every row that holds the word, for its rarity (IDF), and reads each row's token count
// from another table. For the word of 50,000 rows that is most of the search (at 50k rows,
// 10.7 of 13.8 ms for the window's 1,001 rows). With one word the IDF is the same factor in
// every row's score, so the order is that of the rest of the formula, which needs only the
// row's text (read anyway for its id and categories) and the table's totals (one small
// record of FTS5's data table): FTS5's own formula (k1 1.2, b 0.75, ftsWeights per match,
// the row's length against the table's mean), with IDF taken as 1.
//
// Only ASCII is split and folded here, where the unicode61 tokenizer's rules are short and
// exact (runs of letters and digits, case folded): ok is false, and the caller scores with
// bm25, for a word or a window row with any other character, whose splitting and folding
// (diacritics, final sigma, marks inside words) this does not reproduce. A window is given
// up at its first row of other text, so such a row costs at most one more read of the
// window, never a per-character cost (TestScoredWindowIsBM25,
// TestScoredWindowGivesUpOnOtherText).
func (ftsSearch) scoredWindow(ctx context.Context, rd searchReader, t term, src string, args []any) (_ []searchRow, ok bool, _ error) {
	if !t.ascii {
		return nil, false, nil
	}
	nRow, nTok, err := ftsTotals(ctx, rd)
	if err != nil {
		return nil, false, err
	}
	avgdl := 1.0
	if nRow > 0 && nTok > 0 {
		avgdl = float64(nTok) / float64(nRow)
	}
	// The text comes from FTS5's content table (columns c0… in the table's order, keyed by
	// rowid), joined in the one statement: read through the FTS5 cursor, each row is a
	// statement of its own, twice the cost. The columns come as one value, joined by the
	// unit separator (not a token character): the driver makes a string and an interface
	// of each value it returns, and one value a row rather than five is a third of the
	// window's allocations. A row whose text holds the separator itself gives up.
	rows, err := rd.QueryContext(ctx, "SELECT "+joinedContent+" FROM (SELECT rowid AS r FROM "+src+
		" ORDER BY rowid LIMIT ?) AS m CROSS JOIN search_content AS c ON c.id = m.r ORDER BY m.r", append(args, SearchCap+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	out := make([]searchRow, 0, SearchCap+1)
	var row sql.RawBytes // the driver's bytes, valid until Next: only id and categories are copied
	var cols [len(ftsWeights)][]byte
	for rows.Next() {
		if err := rows.Scan(&row); err != nil {
			return nil, false, fmt.Errorf("store: search: %w", err)
		}
		if !isASCII(row) || !splitContent(row, &cols) {
			return nil, false, nil
		}
		var freq float64
		var d int
		for i, c := range cols {
			n, hits := countTokens(c, t)
			d += n
			freq += float64(hits) * ftsWeights[i]
		}
		score := -(freq * (bm25K1 + 1)) / (freq + bm25K1*(1-bm25B+bm25B*float64(d)/avgdl))
		out = append(out, searchRow{id: string(cols[0]), categories: string(cols[4]), score: score})
	}
	return out, true, rows.Err()
}

// contentSep joins the columns of a content row in joinedContent.
const contentSep = 0x1f

// joinedContent is the content row's columns c0…c4 as one text, joined by contentSep.
const joinedContent = "c.c0 || char(31) || c.c1 || char(31) || c.c2 || char(31) || c.c3 || char(31) || c.c4"

// splitContent splits a row of joinedContent into its columns; false when it does not hold
// exactly one column for each (a column holding the separator, or a NULL one).
func splitContent(row []byte, cols *[len(ftsWeights)][]byte) bool {
	last := len(cols) - 1
	for n := range last {
		var ok bool
		if cols[n], row, ok = bytes.Cut(row, []byte{contentSep}); !ok {
			return false
		}
	}
	cols[last] = row
	return bytes.IndexByte(row, contentSep) < 0
}

// ftsTotals are the search table's row count and token count (every column), from FTS5's
// averages record (row 1 of its data table: SQLite varints, the row count then each
// column's token total).
func ftsTotals(ctx context.Context, rd searchReader) (rows, tokens int64, err error) {
	var rec []byte
	err = rd.QueryRowContext(ctx, "SELECT block FROM search_data WHERE id = 1").Scan(&rec)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil // a table never written has no record
	}
	if err != nil {
		return 0, 0, fmt.Errorf("store: search totals: %w", err)
	}
	if len(rec) == 0 {
		return 0, 0, nil // nor, with an empty record, a table created empty
	}
	v, n := sqliteVarint(rec)
	if n == 0 {
		return 0, 0, fmt.Errorf("store: search totals: a damaged averages record (%d bytes)", len(rec))
	}
	rows, rec = int64(v), rec[n:]
	for len(rec) > 0 {
		v, n := sqliteVarint(rec)
		if n == 0 {
			return 0, 0, fmt.Errorf("store: search totals: a damaged averages record")
		}
		tokens += int64(v)
		rec = rec[n:]
	}
	return rows, tokens, nil
}

// sqliteVarint decodes SQLite's varint (big-endian, 7 bits a byte with the high bit
// saying more follow, the ninth byte whole) at the start of b: the value and its length,
// 0 when b ends first.
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b); i++ {
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// term is a query word folded as the index folds it; prefix matches the tokens that start
// with it (FTS5's "word"*), else only the word; ascii says the word as typed is ASCII (only
// then is its folding here certainly FTS5's).
type term struct {
	fold          string
	prefix, ascii bool
}

func termOf(w string, prefix bool) term {
	return term{fold: pgFold(w), prefix: prefix, ascii: isASCII([]byte(w))}
}

// countTokens is the number of tokens of the ASCII text s as unicode61 splits it (runs of
// letters and digits) and how many of them fold to t.
func countTokens(s []byte, t term) (n, hits int) {
	start := -1
	for i := 0; i <= len(s); i++ {
		tokenChar := i < len(s) && s[i] < utf8.RuneSelf && asciiTokenChar[s[i]]
		if tokenChar && start < 0 {
			start = i
		}
		if !tokenChar && start >= 0 {
			n++
			if tokenIs(s[start:i], t) {
				hits++
			}
			start = -1
		}
	}
	return n, hits
}

// asciiTokenChar: the unicode61 tokenizer's token characters among ASCII (letters, digits).
var asciiTokenChar = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// tokenIs reports whether the ASCII token tok folds to t (starts with it, for a prefix).
func tokenIs(tok []byte, t term) bool {
	if t.prefix {
		return len(tok) >= len(t.fold) && asciiEqualFold(tok[:len(t.fold)], t.fold)
	}
	return len(tok) == len(t.fold) && asciiEqualFold(tok, t.fold)
}

func isASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiEqualFold reports whether the ASCII tok lower-cased is the lower-case fold.
func asciiEqualFold(tok []byte, fold string) bool {
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != fold[i] {
			return false
		}
	}
	return true
}
