package store

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestRebind(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"none", "SELECT 1", "SELECT 1", 0},
		{"in order", "SELECT a FROM t WHERE b = ? AND c IN (?, ?)", "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)", 3},
		{"ten and more", strings.Repeat("?,", 11) + "?", "$1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12", 12},
		{"string literal", "SELECT '?' , ?", "SELECT '?' , $1", 1},
		{"doubled quote in literal", "SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1", 1},
		{"E string backslash", `SELECT E'\'?', ?`, `SELECT E'\'?', $1`, 1},
		{"backslash in plain literal", `SELECT '\', ?`, `SELECT '\', $1`, 1},
		{"identifier named E", `SELECT e'?' , ?`, `SELECT e'?' , $1`, 1},
		{"column ending in e before literal", `SELECT type'?', ?`, `SELECT type'?', $1`, 1},
		{"quoted identifier", `SELECT "a?b" FROM t WHERE x = ?`, `SELECT "a?b" FROM t WHERE x = $1`, 1},
		{"doubled quote in identifier", `SELECT "a""?" , ?`, `SELECT "a""?" , $1`, 1},
		{"line comment", "SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2", 2},
		{"block comment", "SELECT /* ? */ ?", "SELECT /* ? */ $1", 1},
		{"dollar quoted", "CREATE FUNCTION f() AS $$ SELECT '?' ? $$; SELECT ?", "CREATE FUNCTION f() AS $$ SELECT '?' ? $$; SELECT $1", 1},
		{"tagged dollar quote", "SELECT $fn$ ? $$ ? $fn$, ?", "SELECT $fn$ ? $$ ? $fn$, $1", 1},
		{"positional parameter is no quote", "SELECT $1, ?", "SELECT $1, $1", 1},
		{"dollar inside identifier", "SELECT a$b$ ?", "SELECT a$b$ $1", 1},
		{"unterminated literal", "SELECT ?, 'open ?", "SELECT $1, 'open ?", 1},
		{"unterminated comment", "SELECT ? /* open ?", "SELECT $1 /* open ?", 1},
		{"lone minus and slash", "SELECT ? - 1 / ?", "SELECT $1 - 1 / $2", 2},
		{"escape string right after a placeholder", `?E'\'?`, `$1E'\'?`, 1},
		{"escape string after a rebound placeholder", `$1E'\'?`, `$1E'\'?`, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := rebind(tc.in)
			if got != tc.want || n != tc.n {
				t.Errorf("rebind(%q) = %q, %d; want %q, %d", tc.in, got, n, tc.want, tc.n)
			}
		})
	}
}

// FuzzRebind: for any query without a $ of its own, rebind replaces only question marks,
// numbering the placeholders 1, 2, 3, … left to right (turning each $k back into ? gives
// the query again), and leaves none outside literals, identifiers and comments:
// rebinding its output again changes nothing.
func FuzzRebind(f *testing.F) {
	for _, s := range []string{"SELECT ?", "SELECT '?', \"?\", ? -- ?\n", "/* ? */ ?", "E'\\'?' ?", "''?''", "?1?'?'?", "x?y?", "?E'\\'?"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if strings.Contains(in, "$") {
			t.Skip()
		}
		out, n := rebind(in)
		back, k := unbind(t, out)
		if back != in || k != n {
			t.Fatalf("rebind(%q) = %q, %d: unbound %q with %d placeholders", in, out, n, back, k)
		}
		if again, m := rebind(out); again != out || m != 0 {
			t.Fatalf("rebind(%q) = %q, and again %q, %d: a ? left outside quotes", in, out, again, m)
		}
	})
}

// unbind turns the placeholders $1, $2, … of out back into ?, failing t when they are
// not numbered in order; it returns the query and their number.
func unbind(t *testing.T, out string) (string, int) {
	var b strings.Builder
	k := 0
	for {
		j := strings.IndexByte(out, '$')
		if j < 0 {
			b.WriteString(out)
			return b.String(), k
		}
		k++
		num := strconv.Itoa(k)
		if !strings.HasPrefix(out[j+1:], num) {
			t.Fatalf("placeholder %d is not $%d: %q", k, k, out[j:])
		}
		b.WriteString(out[:j] + "?")
		out = out[j+1+len(num):]
	}
}

type (
	namedString string
	namedInt    int32
	namedBytes  []byte
)

type valuer struct{ v string }

func (v valuer) Value() (driver.Value, error) { return v.v, nil }

func TestNormalizeArg(t *testing.T) {
	tests := []struct {
		name    string
		in, out any
	}{
		{"true", true, int64(1)},
		{"false", false, int64(0)},
		{"raw JSON", json.RawMessage(`{"a":1}`), []byte(`{"a":1}`)},
		{"named bytes", namedBytes("x"), []byte("x")},
		{"named string", namedString("s"), "s"},
		{"named int", namedInt(7), int64(7)},
		{"int", 5, int64(5)},
		{"valuer", valuer{"v"}, "v"},
		{"nil", nil, nil},
		{"string", "plain", "plain"},
		{"unknown type left to pgx", []string{"a"}, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.out, normalizeArg(tc.in)); diff != "" {
				t.Errorf("normalizeArg(%#v) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"broken connection", io.ErrUnexpectedEOF, true},
		{"bad conn", driver.ErrBadConn, true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure class", &pgconn.PgError{Code: "08006"}, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"caller gave up", context.Canceled, false},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
		{"not found", ErrNotFound, false},
		{"conflict", ErrConflict, false},
		{"nil", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := unavailable(tc.err)
			if got := errors.Is(err, ErrUnavailable); got != tc.want {
				t.Errorf("unavailable(%v) is ErrUnavailable: %v, want %v", tc.err, got, tc.want)
			}
			if tc.err != nil && !errors.Is(err, tc.err) {
				t.Errorf("unavailable(%v) = %v: lost the cause", tc.err, err)
			}
		})
	}
}

func TestDialectString(t *testing.T) {
	if SQLite.String() != "sqlite" || Postgres.String() != "postgres" {
		t.Errorf("dialect names %q, %q; want sqlite, postgres", SQLite, Postgres)
	}
}

// BenchmarkRebind measures rewriting a query's placeholders at growing sizes (an IN list
// of n, as BlockedAmong and the log's hash reads write): linear in the query's length.
func BenchmarkRebind(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		q := "SELECT sha256, reason FROM blocklist WHERE note <> 'it''s ?' AND sha256 IN (?" + strings.Repeat(", ?", n-1) + ")"
		b.Run(fmt.Sprintf("placeholders=%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, got := rebind(q); got != n {
					b.Fatalf("%d placeholders, want %d", got, n)
				}
			}
		})
	}
}
