package store

import (
	"context"
	"fmt"
)

// VerifyError is a copy whose destination does not match its source once copied (rule
// migrate.verify): a table's row count or rows differ, or a blob is absent or not its bytes.
type VerifyError struct {
	Table    string // "" for a blob
	SrcRows  int64
	DstRows  int64
	Blob     string
	Problem  string
	sameRows bool
}

// RuleCopyVerify is the rule id of VerifyError.
const RuleCopyVerify = "migrate.verify"

func (e *VerifyError) Error() string {
	if e.Blob != "" {
		return fmt.Sprintf("%s: blob %s in the destination: %s", RuleCopyVerify, e.Blob, e.Problem)
	}
	if e.sameRows {
		return fmt.Sprintf("%s: table %s has %d rows on both sides but their contents differ (did the source change during the copy? stop the registry and run the copy again)",
			RuleCopyVerify, e.Table, e.SrcRows)
	}
	return fmt.Sprintf("%s: table %s has %d rows in the source and %d in the destination (did the source change during the copy? stop the registry and run the copy again)",
		RuleCopyVerify, e.Table, e.SrcRows, e.DstRows)
}

// tableSum is a table's row count and the XOR of its rows' digests.
type tableSum struct {
	rows   int64
	digest [32]byte
}

// sumTable reads every row of t (meta without the copy's checkpoints).
func sumTable(ctx context.Context, q schemaReader, d Dialect, t *copyTable, batch int) (tableSum, error) {
	var s tableSum
	var after []any
	for {
		rows, err := selectBatch(ctx, q, d, t, after, batch, tableWhere(t))
		if err != nil {
			return s, fmt.Errorf("store: copy: verify %s: %w", t.Name, err)
		}
		n := 0
		var last []any
		for rows.Next() {
			row, _, err := scanRow(rows, len(t.Columns))
			if err != nil {
				rows.Close()
				return s, fmt.Errorf("store: copy: verify %s: %w", t.Name, err)
			}
			h := rowDigest(row)
			for i := range s.digest {
				s.digest[i] ^= h[i]
			}
			n++
			last = row
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return s, fmt.Errorf("store: copy: verify %s: %w", t.Name, err)
		}
		s.rows += int64(n)
		if n < batch {
			return s, nil
		}
		after = keyOf(t, last)
	}
}

// verifyTables compares every copied table's row count and row digest on both sides.
func (c *copier) verifyTables(ctx context.Context, plan []*copyTable) error {
	for i, t := range plan {
		src, err := sumTable(ctx, c.read, c.srcD, t, 1000)
		if err != nil {
			return err
		}
		dst, err := sumTable(ctx, c.dst, c.dstD, t, 1000)
		if err != nil {
			return err
		}
		if src.rows != dst.rows || src.digest != dst.digest {
			return &VerifyError{Table: t.Name, SrcRows: src.rows, DstRows: dst.rows, sameRows: src.rows == dst.rows}
		}
		c.report.Tables[i].Rows = src.rows
		c.emit(func(p *CopyProgress) { p.Phase, p.Table = "verify rows", t.Name })
	}
	return nil
}
