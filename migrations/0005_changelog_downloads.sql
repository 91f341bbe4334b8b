-- The changelog of a release, fixed at publish: CHANGELOG.md as published (NULL when the
-- package has none), rendered to sanitized HTML by readme.Render, and the section of it
-- whose heading names this release's version, rendered the same way (NULL when no heading
-- names it). Releases published before this migration kept no CHANGELOG.md: theirs stay NULL.
ALTER TABLE releases ADD COLUMN changelog BLOB;
ALTER TABLE releases ADD COLUMN changelog_html BLOB;
ALTER TABLE releases ADD COLUMN notes_html BLOB;

-- Counted downloads of each package per UTC day, added to by the batched download flush in
-- the same transaction as the per-release counters; pages chart the last 30 or 90 days.
CREATE TABLE downloads_daily (
    package_id TEXT    NOT NULL REFERENCES packages (id),
    day        TEXT    NOT NULL CHECK (day GLOB '[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]'),
    downloads  INTEGER NOT NULL CHECK (downloads > 0),
    PRIMARY KEY (package_id, day)
) STRICT, WITHOUT ROWID;
