-- Reports: anyone may report a published package (or one of its versions) as malicious,
-- broken or other. The reporter is kept only as reporter_hash, an HMAC-SHA256 of their
-- address under a key that lives outside the database (DATA/reporter.key), so a copy of the
-- database alone cannot be turned back into addresses. A report is open until an admin
-- resolves it with a text and the action taken; resolution, resolved_at, resolved_by and
-- action are set together or not at all.
CREATE TABLE reports (
    id            INTEGER PRIMARY KEY,
    package_id    TEXT    NOT NULL REFERENCES packages (id),
    version       TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    kind          TEXT    NOT NULL CHECK (kind IN ('malicious', 'broken', 'other')),
    reason        TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 4096),
    reporter_hash TEXT    NOT NULL CHECK (length(reporter_hash) = 64),
    created_at    TEXT    NOT NULL,
    resolved_at   TEXT,
    resolved_by   TEXT,
    resolution    TEXT    CHECK (resolution IS NULL OR length(resolution) BETWEEN 1 AND 1024),
    action        TEXT    CHECK (action IS NULL OR action IN ('none', 'yanked', 'quarantined', 'deprecated')),
    CHECK ((resolved_at IS NULL) = (resolution IS NULL)),
    CHECK ((resolved_at IS NULL) = (action IS NULL)),
    CHECK ((resolved_at IS NULL) = (resolved_by IS NULL))
) STRICT;
-- The admin queue (open reports first) and one package's reports. A package page reads
-- only the reports that led to an action, through their own partial index: a flood of
-- open reports against one package costs its page views nothing.
CREATE INDEX reports_open ON reports (resolved_at, id);
CREATE INDEX reports_package ON reports (package_id, id);
CREATE INDEX reports_actioned ON reports (package_id, id) WHERE resolved_at IS NOT NULL AND action <> 'none';
-- The one-open-report-per-reporter check reads only that reporter's reports.
CREATE INDEX reports_reporter ON reports (reporter_hash, package_id);
