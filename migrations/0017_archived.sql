-- Provenance never downgrades: a package's pin also records the workflow of its last
-- verified Sigstore signature ('' for pins made before this migration; the next verified
-- release records it).
ALTER TABLE pins ADD COLUMN workflow TEXT NOT NULL DEFAULT '' CHECK (length(workflow) <= 512);

-- Archived packages: an owner says no more releases are expected. The package stays
-- installable and listed; it sorts after active packages and refuses publishes until it is
-- unarchived. NULL means active.
ALTER TABLE packages ADD COLUMN archived_at TEXT;
-- Searches order archived packages last: the few archived ids are read through this index.
CREATE INDEX packages_archived ON packages (id) WHERE archived_at IS NOT NULL;

-- The change feed learns 'archive' and 'unarchive' (beside 0013's quarantine kinds).
-- SQLite cannot alter a CHECK, so the table is rebuilt with its rows, index and append-only
-- triggers (DROP TABLE fires no delete trigger).
CREATE TABLE changes_new (
    serial     INTEGER PRIMARY KEY CHECK (serial >= 1),
    package_id TEXT    CHECK (package_id IS NULL OR length(package_id) BETWEEN 1 AND 214),
    change     TEXT    NOT NULL CHECK (change IN ('publish', 'yank', 'unyank', 'yank_all', 'deprecate', 'undeprecate', 'stats', 'list', 'compat', 'quarantine', 'unquarantine', 'archive', 'unarchive')),
    version    TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    at         TEXT    NOT NULL,
    CHECK ((change = 'list') = (package_id IS NULL))
) STRICT;
INSERT INTO changes_new (serial, package_id, change, version, at) SELECT serial, package_id, change, version, at FROM changes;
DROP TABLE changes;
ALTER TABLE changes_new RENAME TO changes;
CREATE INDEX changes_package ON changes (package_id, serial);
CREATE TRIGGER changes_append_only_update BEFORE UPDATE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
CREATE TRIGGER changes_append_only_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
