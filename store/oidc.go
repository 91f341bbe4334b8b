package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// MaxJTILen bounds the token ids UseJTI keeps; GitHub's are UUIDs.
const MaxJTILen = 256

// UseJTI records that the identity token jti of issuer, valid until expires, has been
// exchanged. It returns ErrConflict when that token id was already used and has not
// expired by now (a replay). Rows of tokens expired by now are deleted in the same
// transaction, so the table holds only live token ids.
func (s *Store) UseJTI(ctx context.Context, issuer, jti string, expires, now time.Time) error {
	if jti == "" || len(jti) > MaxJTILen {
		return fmt.Errorf("store: oidc jti of %d bytes: expected 1 to %d", len(jti), MaxJTILen)
	}
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM oidc_jti WHERE expires_at < ?", stamp(now)); err != nil {
			return fmt.Errorf("store: expire oidc jti: %w", err)
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO oidc_jti (issuer, jti, expires_at, used_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (issuer, jti) DO NOTHING`, issuer, jti, stamp(expires), stamp(now))
		if err != nil {
			return fmt.Errorf("store: use oidc jti: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: use oidc jti: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("store: oidc jti %q of %s already used: %w", jti, issuer, ErrConflict)
		}
		return nil
	})
}
