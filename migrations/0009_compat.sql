-- Curated compatibility (registry compat set, POST /api/v1/admin/compat/...): an admin
-- narrows the host range of one release after the fact, e.g. "breaks on Kandev after
-- 0.93.4". Only an upper bound can be curated: the manifest's min_kandev_version stays the
-- lower bound, so a curation can narrow what the manifest declares and never widen it.
-- max_kandev is inclusive (hosts at or below it may install the release).
CREATE TABLE compat (
    release_id INTEGER PRIMARY KEY REFERENCES releases (id),
    max_kandev TEXT    NOT NULL CHECK (length(max_kandev) BETWEEN 5 AND 64),
    reason     TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    set_by     TEXT    NOT NULL,
    set_at     TEXT    NOT NULL
) STRICT;
