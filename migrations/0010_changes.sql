-- The change feed (GET /api/v1/changes): one row per serial bump, written in the same
-- transaction as the change and the bump, so that a mirror that read serial S can learn
-- exactly what changed after S. package_id is NULL for a reload of the curated list (it
-- may list or delist any package).
CREATE TABLE changes (
    serial     INTEGER PRIMARY KEY CHECK (serial >= 1),
    package_id TEXT    CHECK (package_id IS NULL OR length(package_id) BETWEEN 1 AND 214),
    change     TEXT    NOT NULL CHECK (change IN ('publish', 'yank', 'unyank', 'yank_all', 'deprecate', 'undeprecate', 'stats', 'list', 'compat')),
    version    TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    at         TEXT    NOT NULL,
    CHECK ((change = 'list') = (package_id IS NULL))
) STRICT;

CREATE INDEX changes_package ON changes (package_id, serial);

-- What changed before this migration is not known: the feed is complete only after the
-- serial of that moment (0 on a new database, so there it is complete from the start).
INSERT INTO meta (key, value) SELECT 'changes_complete_since', value FROM meta WHERE key = 'serial';

CREATE TRIGGER changes_append_only_update BEFORE UPDATE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
CREATE TRIGGER changes_append_only_delete BEFORE DELETE ON changes
BEGIN SELECT RAISE(ABORT, 'changes is append-only'); END;
