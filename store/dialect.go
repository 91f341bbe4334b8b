package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Dialect is the SQL dialect of the database a Store runs on.
type Dialect int

// The dialects: the embedded SQLite database, and PostgreSQL for several replicas.
const (
	SQLite Dialect = iota
	Postgres
)

// String is the dialect's name: "sqlite" or "postgres".
func (d Dialect) String() string {
	if d == Postgres {
		return "postgres"
	}
	return "sqlite"
}

// param is the i-th (0-based) bind parameter in d's own spelling, for SQL that does not go
// through the store's rebind (a copy's plain connections).
func (d Dialect) param(i int) string {
	if d == Postgres {
		return "$" + strconv.Itoa(i+1)
	}
	return "?"
}

// dialectOf is the dialect a database URL names: sqlite:… or postgres:// (postgresql://).
func dialectOf(databaseURL string) (Dialect, bool) {
	switch {
	case strings.HasPrefix(databaseURL, "sqlite:"):
		return SQLite, true
	case strings.HasPrefix(databaseURL, "postgres://"), strings.HasPrefix(databaseURL, "postgresql://"):
		return Postgres, true
	}
	return 0, false
}

// ErrUnavailable is wrapped by the errors of calls that failed because the database could
// not be reached (connection refused or reset, the server shutting down): the caller may
// answer 503 and retry later, nothing was written.
var ErrUnavailable = errors.New("store: database unavailable")

// ErrUnsupported is wrapped by the errors of operations the store's dialect does not have
// (a SQLite file backup on PostgreSQL).
var ErrUnsupported = errors.New("not supported on this database")

// Advisory lock keys (pg_advisory_lock's bigint): one for migrations, held for a whole
// migration run, and one every write transaction takes, so that writes from every replica
// are serialised as SQLite's single writer serialises them.
const (
	pgMigrateKey int64 = 0x7265_6769_6d69 // "regimi"
	pgWriteKey   int64 = 0x7265_6769_7772 // "regiwr"
)

// rebind rewrites the store's ? placeholders to PostgreSQL's $1..$n, left to right,
// leaving alone a ? inside a string literal ('…', E'…'), a quoted identifier ("…"), a
// dollar-quoted body ($tag$…$tag$) or a comment (-- … and /* … */). It returns the
// query and the number of placeholders.
func rebind(query string) (string, int) {
	if !strings.Contains(query, "?") {
		return query, 0
	}
	b := make([]byte, 0, len(query)+3*strings.Count(query, "?"))
	n := 0
	for i := 0; i < len(query); {
		if query[i] == '?' {
			n++
			b = strconv.AppendInt(append(b, '$'), int64(n), 10)
			i++
			continue
		}
		end := skipQuoted(query, i)
		b = append(b, query[i:end]...)
		i = end
	}
	return string(b), n
}

// skipQuoted returns the end of the token starting at i: past a whole literal,
// identifier, dollar-quoted body or comment that starts there (its end when unterminated),
// else i+1.
func skipQuoted(q string, i int) int {
	switch c := q[i]; {
	case c == '\'':
		return skipString(q, i, escapeString(q, i))
	case c == '"':
		return skipString(q, i, false)
	case c == '-' && strings.HasPrefix(q[i:], "--"):
		if j := strings.IndexByte(q[i:], '\n'); j >= 0 {
			return i + j + 1
		}
		return len(q)
	case c == '/' && strings.HasPrefix(q[i:], "/*"):
		if j := strings.Index(q[i+2:], "*/"); j >= 0 {
			return i + 2 + j + 2
		}
		return len(q)
	case c == '$':
		return skipDollar(q, i)
	}
	return i + 1
}

// escapeString reports whether the literal quoted at q[i] is an E'…' string: an E right
// before it that starts its word, or that follows a placeholder ($1E'…', what ?E'…'
// becomes, so that rebinding a query twice reads its literals alike).
func escapeString(q string, i int) bool {
	if i == 0 || (q[i-1] != 'E' && q[i-1] != 'e') {
		return false
	}
	j := i - 2
	for j >= 0 && q[j] >= '0' && q[j] <= '9' {
		j--
	}
	if j >= 0 && j < i-2 && q[j] == '$' {
		return true
	}
	return !isIdentByte(q, i-2)
}

// skipString skips a literal quoted by q[i] (' or "), in which a doubled quote stands
// for itself and, with backslash (E'…' strings), a backslash escapes the next byte.
func skipString(q string, i int, backslash bool) int {
	quote := q[i]
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if backslash {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(q)
}

// skipDollar skips a dollar-quoted body $tag$…$tag$ starting at i; a $ that opens none
// ($1, a $ inside an identifier) is one byte.
func skipDollar(q string, i int) int {
	if isIdentByte(q, i-1) {
		return i + 1
	}
	j := i + 1
	for j < len(q) && (q[j] == '_' || isLetter(q[j]) || (j > i+1 && q[j] >= '0' && q[j] <= '9')) {
		j++
	}
	if j >= len(q) || q[j] != '$' {
		return i + 1
	}
	tag := q[i : j+1]
	if k := strings.Index(q[j+1:], tag); k >= 0 {
		return j + 1 + k + len(tag)
	}
	return len(q)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 }

// isIdentByte reports whether q[i] exists and may be part of an identifier.
func isIdentByte(q string, i int) bool {
	if i < 0 || i >= len(q) {
		return false
	}
	c := q[i]
	return isLetter(c) || c == '_' || c == '$' || c >= '0' && c <= '9'
}

// normalizeArg turns an argument into what the PostgreSQL schema stores: a bool becomes
// 0 or 1 (the schema keeps SQLite's INTEGER flags), named types (json.RawMessage, a named
// string or int) their base type, a driver.Valuer its value. A type database/sql does not
// know is left to pgx, which encodes more types than database/sql does.
func normalizeArg(v any) any {
	c, err := driver.DefaultParameterConverter.ConvertValue(v)
	if err != nil {
		return v
	}
	if b, ok := c.(bool); ok {
		if b {
			return int64(1)
		}
		return int64(0)
	}
	return c
}

// unavailable wraps err with ErrUnavailable when it says the database cannot be reached
// (rather than that a statement failed): a refused or broken connection, a connection
// error of the server (SQLSTATE class 08) or its shutdown (57P01–57P03).
func unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) || !isUnavailable(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

func isUnavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true // the server could not be reached, whatever the reason
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller gave up: not the database's fault
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr), errors.Is(err, driver.ErrBadConn):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return pgconn.SafeToRetry(err)
}
