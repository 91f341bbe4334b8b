-- blocklist holds the sha256 digests an admin refuses at publish (issue 19): of a whole
-- package (its .tar.gz bytes) or of any one file inside one. Entries are added and removed
-- by `registry blocklist` and the admin API, each with an audit row; the reason is shown
-- to the author whose publish it refuses.
CREATE TABLE blocklist (
    sha256 TEXT PRIMARY KEY CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    reason TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
    added_by TEXT NOT NULL,
    added_at TEXT NOT NULL
) STRICT;
