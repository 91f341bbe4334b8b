package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// metaWhere leaves a copy's own checkpoints out of meta, on either side.
const metaWhere = "key NOT LIKE 'migrate:%'"

func tableWhere(t *copyTable) string {
	if t.Name == copyMetaTable {
		return metaWhere
	}
	return ""
}

// copyTable copies t from its checkpoint on, one committed batch at a time, then sets its
// PostgreSQL sequences past the copied keys.
func (c *copier) copyTable(ctx context.Context, t *copyTable) error {
	rep := TableReport{Name: t.Name}
	done, after, err := c.checkpoint(ctx, t)
	if err != nil {
		return err
	}
	for !done {
		batch, err := c.readBatch(ctx, t, after)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		n, err := c.writeBatch(ctx, t, batch)
		if err != nil {
			return err
		}
		rep.Inserted += n
		after = keyOf(t, batch[len(batch)-1])
		c.emit(func(p *CopyProgress) { p.Phase, p.Table, p.Rows = "rows", t.Name, p.Rows+int64(len(batch)) })
	}
	if !done {
		if err := c.putMeta(ctx, c.dst, copyDoneKey+t.Name, "1"); err != nil {
			return err
		}
	}
	if err := c.resetSequences(ctx, t); err != nil {
		return err
	}
	c.report.Tables = append(c.report.Tables, rep)
	return nil
}

// checkpoint reads where a previous run stopped in t: done, or the last key it committed.
func (c *copier) checkpoint(ctx context.Context, t *copyTable) (bool, []any, error) {
	var done int
	err := c.dst.QueryRowContext(ctx, "SELECT count(*) FROM meta WHERE key = "+c.dstD.param(0), copyDoneKey+t.Name).Scan(&done)
	if err != nil {
		return false, nil, fmt.Errorf("store: copy: read the checkpoint of %s: %w", t.Name, err)
	}
	if done > 0 {
		return true, nil, nil
	}
	var raw string
	err = c.dst.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = "+c.dstD.param(0), copyTableKey+t.Name).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("store: copy: read the checkpoint of %s: %w", t.Name, err)
	}
	key, err := decodeKey(raw)
	return false, key, err
}

func keyOf(t *copyTable, row []any) []any {
	idx := keyIndexes(t)
	key := make([]any, len(idx))
	for i, j := range idx {
		key[i] = row[j]
	}
	return key
}

// readBatch reads the next rows of t after key from the source snapshot: at most BatchRows
// rows (fewer when their bind parameters or their bytes would make one statement too big).
func (c *copier) readBatch(ctx context.Context, t *copyTable, after []any) ([][]any, error) {
	limit := min(c.opt.BatchRows, max(1, copyMaxParams/len(t.Columns)))
	rows, err := selectBatch(ctx, c.read, c.srcD, t, after, limit, tableWhere(t))
	if err != nil {
		return nil, fmt.Errorf("store: copy: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	var batch [][]any
	size := 0
	for size < copyMaxBatch && rows.Next() {
		row, n, err := scanRow(rows, len(t.Columns))
		if err != nil {
			return nil, fmt.Errorf("store: copy: read %s: %w", t.Name, err)
		}
		batch = append(batch, row)
		size += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: copy: read %s: %w", t.Name, err)
	}
	return batch, nil
}

// writeBatch inserts batch into t and advances t's checkpoint, in one transaction; rows
// already there must be equal to the source's, else the copy is refused (ConflictError).
func (c *copier) writeBatch(ctx context.Context, t *copyTable, batch [][]any) (int64, error) {
	tx, err := c.dst.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("store: copy: write %s: %w", t.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	overwrite := t.Name == copyMetaTable && c.overwriteMeta
	res, err := tx.ExecContext(ctx, c.insertSQL(t, len(batch), overwrite), flatten(t, batch)...)
	if err != nil {
		return 0, fmt.Errorf("store: copy: write %s: %w", t.Name, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: copy: write %s: %w", t.Name, err)
	}
	if !overwrite && n < int64(len(batch)) {
		if err := c.compareExisting(ctx, tx, t, batch); err != nil {
			return 0, err
		}
	}
	key, err := encodeKey(keyOf(t, batch[len(batch)-1]))
	if err != nil {
		return 0, err
	}
	if err := c.putMeta(ctx, tx, copyTableKey+t.Name, key); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("store: copy: commit %s: %w", t.Name, err)
	}
	if overwrite {
		return int64(len(batch)), nil
	}
	return n, nil
}

// flatten is batch's bind arguments, bytes read for a destination text column as strings.
func flatten(t *copyTable, batch [][]any) []any {
	out := make([]any, 0, len(batch)*len(batch[0]))
	for _, row := range batch {
		for i, v := range row {
			if b, ok := v.([]byte); ok && t.Text[t.Columns[i]] {
				v = string(b)
			}
			out = append(out, v)
		}
	}
	return out
}

// insertSQL is the insert of rows rows into t: ON CONFLICT DO NOTHING (or, for meta's seeds
// in an empty destination, DO UPDATE).
func (c *copier) insertSQL(t *copyTable, rows int, overwrite bool) string {
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = quoteIdent(col)
	}
	var b strings.Builder
	// PostgreSQL's identity columns are GENERATED BY DEFAULT: they take the source's ids.
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", quoteIdent(t.Name), strings.Join(cols, ", "))
	p := 0
	for r := 0; r < rows; r++ {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for i := range t.Columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.dstD.param(p))
			p++
		}
		b.WriteByte(')')
	}
	if overwrite {
		b.WriteString(" ON CONFLICT (key) DO UPDATE SET value = excluded.value")
	} else {
		b.WriteString(" ON CONFLICT DO NOTHING")
	}
	return b.String()
}

// compareExisting reads back, by key, the destination's row for each row of batch and
// refuses the first that differs (or that a unique key other than the primary one kept
// out: its primary key then has no row at all).
func (c *copier) compareExisting(ctx context.Context, tx *sql.Tx, t *copyTable, batch [][]any) error {
	conds := make([]string, len(t.Key))
	for i, k := range t.Key {
		conds[i] = quoteIdent(k) + " = " + c.dstD.param(i)
	}
	cols := make([]string, len(t.Columns))
	for i, col := range t.Columns {
		cols[i] = quoteIdent(col)
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(cols, ", "), quoteIdent(t.Name), strings.Join(conds, " AND "))
	for _, row := range batch {
		got, err := c.rowAt(ctx, tx, q, t, keyOf(t, row))
		if err != nil {
			return err
		}
		if got == nil {
			return &ConflictError{Table: t.Name, Key: describeKey(t, row), Column: "(a unique key other than the primary key)"}
		}
		if col := sameRow(t, row, got); col != "" {
			return &ConflictError{Table: t.Name, Key: describeKey(t, row), Column: col}
		}
	}
	return nil
}

func (c *copier) rowAt(ctx context.Context, tx *sql.Tx, q string, t *copyTable, key []any) ([]any, error) {
	rows, err := tx.QueryContext(ctx, q, key...)
	if err != nil {
		return nil, fmt.Errorf("store: copy: read back %s: %w", t.Name, err)
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	row, _, err := scanRow(rows, len(t.Columns))
	if err != nil {
		return nil, fmt.Errorf("store: copy: read back %s: %w", t.Name, err)
	}
	return row, rows.Err()
}

// resetSequences sets each PostgreSQL identity (or serial) sequence of t past its largest
// copied value, so that the next row the registry inserts takes a fresh id.
func (c *copier) resetSequences(ctx context.Context, t *copyTable) error {
	if c.dstD != copyPostgres {
		return nil // SQLite's INTEGER PRIMARY KEY takes max(rowid)+1 by itself
	}
	for _, col := range t.Identity {
		q := fmt.Sprintf("SELECT setval(pg_get_serial_sequence($1, $2), COALESCE((SELECT max(%s) FROM %s), 0) + 1, false)",
			quoteIdent(col), quoteIdent(t.Name))
		if _, err := c.dst.ExecContext(ctx, q, quoteIdent(t.Name), col); err != nil {
			return fmt.Errorf("store: copy: reset the sequence of %s.%s: %w", t.Name, col, err)
		}
		c.report.Sequences = append(c.report.Sequences, t.Name+"."+col)
	}
	return nil
}
