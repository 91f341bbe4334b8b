-- Quarantine (registry quarantine set, POST /api/v1/admin/quarantine/...): an admin takes a
-- whole package (version '') or one release out of reach with a public reason, without
-- deleting anything: its releases, blobs and log records stay, and releasing the
-- quarantine (deleting its row) restores what the index showed. One row per quarantine in
-- force; the history is in the audit log and the transparency log. The reason is public
-- (pages, the 410 of a download, the package document), one line, at most 500 characters.
CREATE TABLE quarantines (
    package_id TEXT NOT NULL CHECK (length(package_id) BETWEEN 1 AND 214),
    version    TEXT NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    reason     TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    set_by     TEXT NOT NULL,
    set_at     TEXT NOT NULL,
    PRIMARY KEY (package_id, version)
) STRICT;

-- The change feed gets the kinds of a quarantine and of its release. SQLite cannot alter a
-- CHECK: the table is rebuilt with the same rows (its triggers and index with it).
CREATE TABLE changes_next (
    serial     INTEGER PRIMARY KEY CHECK (serial >= 1),
    package_id TEXT    CHECK (package_id IS NULL OR length(package_id) BETWEEN 1 AND 214),
    change     TEXT    NOT NULL CHECK (change IN ('publish', 'yank', 'unyank', 'yank_all', 'deprecate', 'undeprecate', 'stats', 'list', 'compat', 'quarantine', 'unquarantine')),
    version    TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    at         TEXT    NOT NULL,
    CHECK ((change = 'list') = (package_id IS NULL))
) STRICT;
INSERT INTO changes_next (serial, package_id, change, version, at) SELECT serial, package_id, change, version, at FROM changes;
DROP TABLE changes;
ALTER TABLE changes_next RENAME TO changes;

CREATE INDEX changes_package ON changes (package_id, serial);

CREATE TRIGGER changes_append_only_update BEFORE UPDATE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
CREATE TRIGGER changes_append_only_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
