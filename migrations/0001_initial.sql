-- Content-addressed blobs: packages and icons. The bytes live in the blob folder under their
-- sha256; a row exists only once the file is durable.
CREATE TABLE blobs (
    sha256     TEXT    PRIMARY KEY CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    size       INTEGER NOT NULL CHECK (size >= 0),
    created_at TEXT    NOT NULL
) STRICT;

-- One row per package id (plugin id, canvas id or extension name): curation state that
-- outlives any single release.
CREATE TABLE packages (
    id                     TEXT    PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 214),
    kind                   TEXT    NOT NULL CHECK (kind IN ('plugin', 'canvas', 'extension')),
    deprecated_reason      TEXT,
    deprecated_replacement TEXT,
    stars                  INTEGER CHECK (stars IS NULL OR stars >= 0),
    pushed_at              TEXT,
    created_at             TEXT    NOT NULL
) STRICT;

-- Every accepted release. Immutable but for the yank flag and the download counter.
CREATE TABLE releases (
    id            INTEGER PRIMARY KEY,
    package_id    TEXT    NOT NULL REFERENCES packages (id),
    version       TEXT    NOT NULL CHECK (length(version) BETWEEN 1 AND 128),
    kind          TEXT    NOT NULL CHECK (kind IN ('plugin', 'canvas', 'extension')),
    sha256        TEXT    NOT NULL REFERENCES blobs (sha256),
    size          INTEGER NOT NULL CHECK (size > 0),
    manifest      BLOB    NOT NULL,
    readme        BLOB,
    icon_sha256   TEXT    REFERENCES blobs (sha256),
    icon_ext      TEXT,
    icon_type     TEXT,
    warnings      TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(warnings)),
    signature     TEXT    CHECK (signature IS NULL OR json_valid(signature)),
    published_by  TEXT    NOT NULL,
    yanked        INTEGER NOT NULL DEFAULT 0 CHECK (yanked IN (0, 1)),
    yank_reason   TEXT,
    downloads     INTEGER NOT NULL DEFAULT 0 CHECK (downloads >= 0),
    created_at    TEXT    NOT NULL,
    UNIQUE (package_id, version),
    CHECK ((icon_sha256 IS NULL) = (icon_ext IS NULL))
) STRICT;
CREATE INDEX releases_sha256 ON releases (sha256);

-- API tokens, stored as sha256 of the secret. kind 'admin' may do anything; 'publisher'
-- may publish the ids whose owners list its publisher; 'upload' is a short-lived token from
-- OIDC trusted publishing, scoped to the ids in scope (a JSON array).
CREATE TABLE tokens (
    id         TEXT PRIMARY KEY,
    hash       TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
    kind       TEXT NOT NULL CHECK (kind IN ('admin', 'publisher', 'upload')),
    publisher  TEXT NOT NULL DEFAULT '',
    scope      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(scope)),
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT
) STRICT;

-- Trust on first use: the GitHub repository and owner ids first seen for a repository,
-- from a verified signature or an OIDC token.
CREATE TABLE pins (
    subject       TEXT PRIMARY KEY,
    repository    TEXT NOT NULL,
    repository_id TEXT NOT NULL CHECK (repository_id <> ''),
    owner_id      TEXT NOT NULL CHECK (owner_id <> ''),
    source        TEXT NOT NULL,
    pinned_at     TEXT NOT NULL
) STRICT;

-- Everything that changed or was refused: publishes, yanks, token changes, reloads.
CREATE TABLE audit (
    id      INTEGER PRIMARY KEY,
    at      TEXT NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    target  TEXT NOT NULL DEFAULT '',
    outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'error')),
    detail  TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(detail))
) STRICT;
CREATE INDEX audit_at ON audit (at);

-- Small named values: the index serial and similar counters.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
INSERT INTO meta (key, value) VALUES ('serial', '0');

-- Full-text search over the latest release of each package (kept by the store on write).
-- Rows are replaced whole by every index rebuild; kind, updated_at and downloads are carried
-- for filtering and sorting only.
CREATE VIRTUAL TABLE search USING fts5 (
    id, name, description, author, categories,
    kind UNINDEXED, updated_at UNINDEXED, downloads UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);
