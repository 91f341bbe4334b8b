package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ChangesChannel is the PostgreSQL channel every serial bump notifies, with the new serial
// as payload, from the transaction that records the change (the trigger changes_notify of
// migrations/postgres/0004_documents.sql): delivered at commit, never for a rollback.
const ChangesChannel = "registry_changes"

// ErrNoNotify is returned by ListenChanges on SQLite, which has no notifications: a
// follower polls the feed instead (one process owns a SQLite database anyway).
var ErrNoNotify = errors.New("store: this database sends no change notifications; poll the change feed")

// pgBuildLockClass is the first key of the build locks (pg_try_advisory_lock(int, int),
// the second key the serial): the two-key form is a lock space of its own, apart from
// the single-key write and migration locks.
const pgBuildLockClass int32 = 0x7265_6762 // "regb"

// ListenChanges calls wake after every committed serial bump, by any replica, until ctx
// ends or the connection fails; it returns why it stopped (wrapping ErrUnavailable when
// the server went away: listen again later). It calls wake once as soon as it listens, so
// that a change committed just before is not left to the next poll. It holds one
// connection of the pool, which it closes when it returns (a connection that listened is
// never reused). On SQLite it returns ErrNoNotify at once.
func (s *Store) ListenChanges(ctx context.Context, wake func()) error {
	if s.dialect != Postgres {
		return ErrNoNotify
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: listen %s: %w", ChangesChannel, unavailable(err))
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "LISTEN "+ChangesChannel); err != nil {
		return fmt.Errorf("store: listen %s: %w", ChangesChannel, unavailable(err))
	}
	wake()
	err = conn.Raw(func(dc any) error {
		pc, ok := dc.(*pgConn)
		if !ok {
			return fmt.Errorf("store: listen %s: the pool's connection is %T, not the store's", ChangesChannel, dc)
		}
		c := pc.Conn.Conn()
		defer func() {
			cctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = c.Close(cctx) // the pool discards a closed connection (ResetSession)
		}()
		for {
			if _, err := c.WaitForNotification(ctx); err != nil {
				return err
			}
			wake()
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("store: listen %s: %w", ChangesChannel, unavailable(err))
}

// TryBuildLock takes the build lock of serial without waiting: ok reports whether this
// caller holds it, and release (never nil) gives it back. Of the replicas that want to
// build the documents of one serial, one wins; the others load what it stores
// (PutDocuments). On PostgreSQL it is a session advisory lock on a connection of its own,
// released by release or, should this process die, by the server. On SQLite, which one
// process owns, the caller always holds it: replicas need PostgreSQL.
func (s *Store) TryBuildLock(ctx context.Context, serial int64) (release func(), ok bool, err error) {
	if s.dialect != Postgres {
		return func() {}, true, nil
	}
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return func() {}, false, fmt.Errorf("store: build lock of serial %d: %w", serial, unavailable(err))
	}
	key := buildLockKey(serial)
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock(CAST(? AS INTEGER), CAST(? AS INTEGER))", pgBuildLockClass, key).Scan(&ok); err != nil {
		_ = conn.Close()
		return func() {}, false, fmt.Errorf("store: build lock of serial %d: %w", serial, unavailable(err))
	}
	if !ok {
		_ = conn.Close()
		return func() {}, false, nil
	}
	return func() { unlockBuild(conn, key) }, true, nil
}

// buildLockKey is the lock's second key: the serial's low 31 bits (two serials 2^31
// apart never build at once).
func buildLockKey(serial int64) int32 { return int32(serial & 0x7fff_ffff) }

// unlockBuild releases the build lock and returns its connection to the pool; when the
// unlock cannot be sent the connection is closed, which releases it too.
func unlockBuild(conn *sql.Conn, key int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var released bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock(CAST(? AS INTEGER), CAST(? AS INTEGER))", pgBuildLockClass, key).Scan(&released); err != nil || !released {
		_ = conn.Raw(func(dc any) error {
			if pc, ok := dc.(*pgConn); ok {
				_ = pc.Conn.Conn().Close(ctx)
			}
			return nil
		})
	}
	_ = conn.Close()
}
