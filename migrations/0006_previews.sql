-- Preview images that plugins.yaml lists, copied by the registry so that pages never
-- hot-link them: each URL is fetched once (from an allow-listed host, size- and
-- type-checked) and its bytes kept as a blob. One row per URL. A row with sha256 holds the
-- copy, which is never fetched again (an author changes an image by changing its URL); a
-- row without one records why the last attempt failed, and the next reload after a while
-- tries again.
CREATE TABLE previews (
    url          TEXT    PRIMARY KEY CHECK (length(url) BETWEEN 1 AND 2048),
    sha256       TEXT    REFERENCES blobs (sha256),
    content_type TEXT    CHECK (content_type IN ('image/png', 'image/jpeg', 'image/webp')),
    size         INTEGER CHECK (size > 0),
    fetched_at   TEXT,             -- RFC 3339 UTC of the fetch that gave sha256
    attempted_at TEXT    NOT NULL, -- RFC 3339 UTC of the last attempt
    attempts     INTEGER NOT NULL CHECK (attempts >= 1),
    error_rule   TEXT    CHECK (length(error_rule) BETWEEN 1 AND 64),
    last_error   TEXT    CHECK (length(last_error) BETWEEN 1 AND 1024),
    -- a copy has all four facts and no error; a failure has an error and no copy
    CHECK ((sha256 IS NULL) = (content_type IS NULL) AND (sha256 IS NULL) = (size IS NULL)
       AND (sha256 IS NULL) = (fetched_at IS NULL)),
    CHECK ((sha256 IS NULL) = (last_error IS NOT NULL) AND (error_rule IS NULL) = (last_error IS NULL))
) STRICT;
