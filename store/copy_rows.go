package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Checkpoint keys a copy keeps in the destination's meta table while it runs, each written
// in the transaction of the batch it follows, and deleted once the copy is verified.
const (
	copyMarkPrefix = "migrate:"
	copySourceKey  = copyMarkPrefix + "source" // the source's identity, and the mode
	copyTableKey   = copyMarkPrefix + "table:" // + table name: the last key copied
	copyDoneKey    = copyMarkPrefix + "done:"  // + table name: the table is whole
	copyMetaTable  = "meta"
	copyMaxBatch   = 4 << 20 // bytes of row data in one batch, whatever its row count
	copyMaxParams  = 30000   // bind parameters in one statement (SQLite allows 32766)
)

// ConflictError is a copy's refusal of a destination that already holds another row under
// a key the source has: the copy never overwrites data (rule migrate.conflict).
type ConflictError struct {
	Table  string
	Key    string // column=value pairs
	Column string // the first column that differs
}

// RuleCopyConflict is the rule id of ConflictError.
const RuleCopyConflict = "migrate.conflict"

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s: the destination's table %s already holds a different row for %s (column %s differs): migrate into an empty database, or delete that row there",
		RuleCopyConflict, e.Table, e.Key, e.Column)
}

// copyValue normalises what either driver returns for a column, so that rows compare and
// hash alike on both dialects: integers as int64, text and blobs as bytes.
func copyValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, float64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("store: copy: a value of Go type %T has no portable form", v)
}

// rowDigest hashes one normalised row; a table's digest XORs its rows', so that it does not
// depend on the order either side returns them in (text keys sort by collation).
func rowDigest(row []any) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, raw := range row {
		v, _ := copyValue(raw) // scanRow refused a value without a portable form
		switch x := v.(type) {
		case nil:
			h.Write([]byte{'n'})
		case int64:
			binary.BigEndian.PutUint64(n[:], uint64(x))
			h.Write([]byte{'i'})
			h.Write(n[:])
		case float64:
			binary.BigEndian.PutUint64(n[:], math.Float64bits(x))
			h.Write([]byte{'f'})
			h.Write(n[:])
		case []byte:
			binary.BigEndian.PutUint64(n[:], uint64(len(x)))
			h.Write([]byte{'b'})
			h.Write(n[:])
			h.Write(x)
		}
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// scanRow reads the current row of rows as the driver gives it (bound back as is on the
// other side: text as strings, blobs as bytes) and its approximate size in bytes.
func scanRow(rows *sql.Rows, n int) ([]any, int, error) {
	raw := make([]any, n)
	ptrs := make([]any, n)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, 0, err
	}
	size := 0
	for _, v := range raw {
		nv, err := copyValue(v)
		if err != nil {
			return nil, 0, err
		}
		if b, ok := nv.([]byte); ok {
			size += len(b)
		}
		size += 8
	}
	return raw, size, nil
}

// keyIndexes are the positions of t's key columns among its columns.
func keyIndexes(t *copyTable) []int {
	idx := make([]int, len(t.Key))
	for i, k := range t.Key {
		for j, c := range t.Columns {
			if c == k {
				idx[i] = j
			}
		}
	}
	return idx
}

// selectBatch reads up to limit rows of t after key (nil: from the start), in key order.
func selectBatch(ctx context.Context, q schemaReader, d Dialect, t *copyTable, after []any, limit int, where string) (*sql.Rows, error) {
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = quoteIdent(c)
	}
	keys := make([]string, len(t.Key))
	for i, k := range t.Key {
		keys[i] = quoteIdent(k)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s FROM %s", strings.Join(cols, ", "), quoteIdent(t.Name))
	var conds []string
	var args []any
	if where != "" {
		conds = append(conds, where)
	}
	if after != nil {
		ps := make([]string, len(after))
		for i, v := range after {
			ps[i] = d.param(i)
			args = append(args, v)
		}
		conds = append(conds, fmt.Sprintf("(%s) > (%s)", strings.Join(keys, ", "), strings.Join(ps, ", ")))
	}
	if len(conds) > 0 {
		b.WriteString(" WHERE " + strings.Join(conds, " AND "))
	}
	fmt.Fprintf(&b, " ORDER BY %s LIMIT %d", strings.Join(keys, ", "), limit)
	return q.QueryContext(ctx, b.String(), args...)
}

// encodeKey and decodeKey keep a key in a checkpoint: integers as JSON numbers, text as
// strings.
func encodeKey(key []any) (string, error) {
	out := make([]any, len(key))
	for i, v := range key {
		switch x := v.(type) {
		case int64:
			out[i] = x
		case int32:
			out[i] = int64(x)
		case string:
			out[i] = x
		default:
			return "", fmt.Errorf("store: copy: a key value of type %T cannot be checkpointed", v)
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

func decodeKey(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var raw []any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("store: copy: checkpoint %q: %w", s, err)
	}
	out := make([]any, len(raw))
	for i, v := range raw {
		switch x := v.(type) {
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, fmt.Errorf("store: copy: checkpoint %q: %w", s, err)
			}
			out[i] = n
		case string:
			out[i] = x
		default:
			return nil, fmt.Errorf("store: copy: checkpoint %q holds a %T", s, v)
		}
	}
	return out, nil
}

// sameRow reports the first column where a and b differ ("" when equal).
func sameRow(t *copyTable, a, b []any) string {
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return t.Columns[i]
		}
	}
	return ""
}

func sameValue(a, b any) bool {
	na, errA := copyValue(a)
	nb, errB := copyValue(b)
	if errA != nil || errB != nil {
		return false
	}
	ab, aok := na.([]byte)
	bb, bok := nb.([]byte)
	if aok || bok {
		return aok && bok && bytes.Equal(ab, bb)
	}
	return na == nb
}

func describeKey(t *copyTable, row []any) string {
	parts := make([]string, len(t.Key))
	for i, j := range keyIndexes(t) {
		v := row[j]
		if b, ok := v.([]byte); ok {
			v = string(b)
		}
		if str, ok := v.(string); ok && len(str) > 80 {
			v = str[:80] + "…"
		}
		parts[i] = fmt.Sprintf("%s=%v", t.Key[i], v)
	}
	return strings.Join(parts, ", ")
}
