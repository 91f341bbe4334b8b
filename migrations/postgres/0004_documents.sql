-- The index documents one replica built for a serial, so that every other replica serves
-- the same bytes (the same ETag) instead of building its own: the first builder of a serial
-- stores them, the rest load them (ingest/replica.go). Only the last few serials are kept.
-- generated_at is the documents' generated_at in Unix nanoseconds (shard documents are
-- planned from it); meta is the builder's JSON summary (entries, mode).
CREATE TABLE documents (
    serial       BIGINT NOT NULL CHECK (serial >= 0),
    name         TEXT   NOT NULL CHECK (name IN ('kandev', 'curupira')),
    etag         TEXT   NOT NULL CHECK (length(etag) BETWEEN 1 AND 80),
    generated_at BIGINT NOT NULL,
    meta         TEXT   NOT NULL DEFAULT '{}',
    body         BYTEA  COMPRESSION lz4 NOT NULL,
    built_by     TEXT   NOT NULL DEFAULT '' CHECK (length(built_by) <= 200),
    PRIMARY KEY (serial, name)
);

-- Every serial bump notifies channel registry_changes with the new serial, in the
-- transaction that records the change: PostgreSQL delivers it at commit, to every replica
-- that LISTENs (store.ListenChanges), which then reads the feed at once rather than at its
-- next poll.
CREATE FUNCTION registry_changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('registry_changes', NEW.serial::text);
    RETURN NEW;
END
$$;

CREATE TRIGGER changes_notify AFTER INSERT ON changes
    FOR EACH ROW EXECUTE FUNCTION registry_changes_notify();
