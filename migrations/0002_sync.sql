-- Pull sync state, one row per GitHub repository that plugins.yaml lists (key: owner
-- lower-cased, "/", name). The ETags make the next round's requests conditional; the
-- outcome and error are what admins see at GET /api/v1/admin/sync. A row is written after
-- every check, so a failing release is recorded without touching the last good one.
CREATE TABLE sync_state (
    repo               TEXT    PRIMARY KEY CHECK (repo LIKE '%_/_%'),
    release_etag       TEXT    NOT NULL DEFAULT '',  -- of the last releases/latest answer
    repo_etag          TEXT    NOT NULL DEFAULT '',  -- of the last repos/{owner}/{repo} answer
    tag                TEXT    NOT NULL DEFAULT '',  -- the latest release's tag when last seen
    ids                TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(ids)),  -- listed ids release_etag was checked for
    repository_id      TEXT    NOT NULL DEFAULT '',  -- GitHub ids last seen, compared with the pin
    owner_id           TEXT    NOT NULL DEFAULT '',
    full_name          TEXT    NOT NULL DEFAULT '',  -- owner/name as GitHub answered (a rename shows here)
    stars              INTEGER CHECK (stars IS NULL OR stars >= 0),
    pushed_at          TEXT,
    checked_at         TEXT    NOT NULL,
    outcome            TEXT    NOT NULL CHECK (outcome IN ('published', 'unchanged', 'failed', 'rate_limited', 'error')),
    error              TEXT    NOT NULL DEFAULT '',
    rules              TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(rules)),
    published          TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(published)),  -- id@version accepted by the last check
    rate_limited_until TEXT
) STRICT;
