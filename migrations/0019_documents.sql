-- The index documents one replica built for a serial, so that every other replica serves
-- the same bytes (the same ETag) instead of building its own: the first builder of a serial
-- stores them, the rest load them (ingest/replica.go). Only the last few serials are kept.
-- generated_at is the documents' generated_at in Unix nanoseconds (shard documents are
-- planned from it); meta is the builder's JSON summary (entries, mode).
CREATE TABLE documents (
    serial       INTEGER NOT NULL CHECK (serial >= 0),
    name         TEXT    NOT NULL CHECK (name IN ('kandev', 'curupira')),
    etag         TEXT    NOT NULL CHECK (length(etag) BETWEEN 1 AND 80),
    generated_at INTEGER NOT NULL,
    meta         TEXT    NOT NULL DEFAULT '{}',
    body         BLOB    NOT NULL,
    built_by     TEXT    NOT NULL DEFAULT '' CHECK (length(built_by) <= 200),
    PRIMARY KEY (serial, name)
) STRICT;
