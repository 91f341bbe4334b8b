-- blocklist holds the sha256 digests an admin refuses at publish (issue 19): of a whole
-- package (its .tar.gz bytes) or of any one file inside one. Entries are added and removed
-- by `registry blocklist` and the admin API, each with an audit row; the reason is shown
-- to the author whose publish it refuses. The checks are plain SQL (length, ltrim), as a
-- PostgreSQL schema would write them.
CREATE TABLE blocklist (
    sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64 AND ltrim(sha256, '0123456789abcdef') = ''),
    reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL
) STRICT;
