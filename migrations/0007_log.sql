-- The transparency log (translog): one row per record, leaf bytes as signed into the tree,
-- in order from 0 with no gaps. Records are never changed or removed; the triggers below
-- refuse it, so a bug (or a hand-run UPDATE) cannot rewrite history the checkpoints sign.
CREATE TABLE log_records (
    idx        INTEGER PRIMARY KEY CHECK (idx >= 0),
    kind       TEXT    NOT NULL CHECK (length(kind) BETWEEN 1 AND 32),
    package_id TEXT    NOT NULL CHECK (length(package_id) BETWEEN 1 AND 214),
    version    TEXT    NOT NULL DEFAULT '',
    sha256     TEXT    NOT NULL DEFAULT '' CHECK (sha256 = '' OR (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*')),
    body       BLOB    NOT NULL CHECK (length(body) BETWEEN 2 AND 4096), -- translog.RecordText
    created_at TEXT    NOT NULL
) STRICT;

-- A release is published once: one publish record per id@version.
CREATE UNIQUE INDEX log_records_publish ON log_records (package_id, version) WHERE kind = 'publish';

-- The tree's hashes in tlog's stored-hash layout (tlog.StoredHashIndex): every hash a
-- tile or a proof needs is one row read by index, on any backend.
CREATE TABLE log_hashes (
    idx  INTEGER PRIMARY KEY CHECK (idx >= 0),
    hash BLOB    NOT NULL CHECK (length(hash) = 32)
) STRICT;

-- Signed checkpoints (signed-note text), one per tree size signed.
CREATE TABLE log_checkpoints (
    size       INTEGER PRIMARY KEY CHECK (size >= 0),
    note       BLOB    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

CREATE TRIGGER log_records_append_only_update BEFORE UPDATE ON log_records
BEGIN SELECT RAISE(ABORT, 'log_records is append-only'); END;
CREATE TRIGGER log_records_append_only_delete BEFORE DELETE ON log_records
BEGIN SELECT RAISE(ABORT, 'log_records is append-only'); END;
CREATE TRIGGER log_hashes_append_only_update BEFORE UPDATE ON log_hashes
BEGIN SELECT RAISE(ABORT, 'log_hashes is append-only'); END;
CREATE TRIGGER log_hashes_append_only_delete BEFORE DELETE ON log_hashes
BEGIN SELECT RAISE(ABORT, 'log_hashes is append-only'); END;
