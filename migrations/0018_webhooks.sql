-- Signed webhooks (docs/webhooks.md): a durable outbox of events and, per configured
-- endpoint, one delivery row per event.
--
-- Events are written by the triggers below, so each one is committed in the same
-- transaction as the change it reports (the release row, the yank, the deprecation, the
-- refusal's audit row, the sync state): a crash can lose neither the change without its
-- event nor an event without its change, and no write path has to remember to emit one.
-- A PostgreSQL backend ports these triggers as PL/pgSQL functions (json_object becomes
-- json_build_object).
--
-- Events are recorded only while at least one endpoint is registered (webhook_endpoints,
-- kept equal to the configured endpoints at every start), so a registry without webhooks
-- keeps no outbox at all.

-- The endpoints seen so far, by name: since_event is the last event id when the endpoint
-- was first configured, so that a new endpoint receives what happens from then on, not the
-- whole history, while an endpoint that was configured all along also receives the events
-- committed while the worker was down.
CREATE TABLE webhook_endpoints (
    name        TEXT    PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    since_event INTEGER NOT NULL CHECK (since_event >= 0),
    added_at    TEXT    NOT NULL
) STRICT;

-- One row per event. subject orders deliveries: the package id, or for sync.failed the
-- repository. msg_id and body are set once by the worker when it fans the event out
-- (sealed), so every attempt to every endpoint sends the same id and the same bytes.
CREATE TABLE webhook_events (
    id          INTEGER PRIMARY KEY,
    type        TEXT    NOT NULL CHECK (type IN ('release.published', 'release.yanked', 'package.deprecated',
                                                 'package.quarantined', 'verification.failed', 'sync.failed')),
    subject     TEXT    NOT NULL CHECK (length(subject) BETWEEN 1 AND 300),
    version     TEXT    NOT NULL DEFAULT '' CHECK (length(version) <= 128),
    detail      TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(detail)),
    occurred_at TEXT    NOT NULL,
    msg_id      TEXT    UNIQUE,
    body        BLOB,
    CHECK ((msg_id IS NULL) = (body IS NULL))
) STRICT;
CREATE INDEX webhook_events_unsealed ON webhook_events (id) WHERE msg_id IS NULL;

-- One row per (event, endpoint): pending until delivered (a 2xx answer) or dead (attempts
-- exhausted, or the endpoint was removed from the configuration). next_at is Unix
-- milliseconds, so that it compares as a number.
CREATE TABLE webhook_deliveries (
    id          INTEGER PRIMARY KEY,
    event_id    INTEGER NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    endpoint    TEXT    NOT NULL CHECK (length(endpoint) BETWEEN 1 AND 64),
    subject     TEXT    NOT NULL,
    state       TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
    attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_at     INTEGER NOT NULL,
    last_status INTEGER NOT NULL DEFAULT 0,
    last_error  TEXT    NOT NULL DEFAULT '' CHECK (length(last_error) <= 1024),
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL,
    UNIQUE (event_id, endpoint)
) STRICT;
-- The head of each (endpoint, subject) queue: the lowest pending id.
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint, subject, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

-- release.published: a new release row (a repeated identical publish inserts none).
CREATE TRIGGER webhook_release_published AFTER INSERT ON releases
WHEN EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
    VALUES ('release.published', NEW.package_id, NEW.version,
            json_object('kind', NEW.kind, 'sha256', NEW.sha256, 'size', NEW.size, 'published_by', NEW.published_by),
            NEW.created_at);
END;

-- release.yanked: a live release became yanked (one yank, or each version of a yank-all).
CREATE TRIGGER webhook_release_yanked AFTER UPDATE OF yanked ON releases
WHEN NEW.yanked = 1 AND OLD.yanked = 0 AND EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
    VALUES ('release.yanked', NEW.package_id, NEW.version,
            json_object('reason', coalesce(NEW.yank_reason, '')),
            strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;

-- package.deprecated: a package became deprecated, or its reason changed.
CREATE TRIGGER webhook_package_deprecated AFTER UPDATE OF deprecated_reason ON packages
WHEN NEW.deprecated_reason IS NOT NULL AND OLD.deprecated_reason IS NOT NEW.deprecated_reason
     AND EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, detail, occurred_at)
    VALUES ('package.deprecated', NEW.id,
            json_object('reason', NEW.deprecated_reason, 'replacement', coalesce(NEW.deprecated_replacement, '')),
            strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;

-- verification.failed: a refused publish, pushed or pulled (its audit row). The target is
-- id@version once the package was read, else the uploaded file name (cut to the subject's
-- limit: a trigger that failed a CHECK would lose the audit row with the event).
CREATE TRIGGER webhook_verification_failed AFTER INSERT ON audit
WHEN NEW.action = 'publish' AND NEW.outcome = 'refused' AND EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
    VALUES ('verification.failed',
            substr(coalesce(nullif(CASE WHEN instr(NEW.target, '@') > 1 THEN substr(NEW.target, 1, instr(NEW.target, '@') - 1) ELSE NEW.target END, ''), '-'), 1, 300),
            CASE WHEN instr(NEW.target, '@') > 1 THEN substr(NEW.target, instr(NEW.target, '@') + 1, 128) ELSE '' END,
            json_object('target', substr(NEW.target, 1, 300), 'actor', NEW.actor, 'refusal', json(NEW.detail)),
            NEW.at);
END;

-- sync.failed: a repository's check failed (refused) or errored, when that is news: the
-- previous state was not the same failure. BEFORE INSERT because PutSyncState replaces the
-- row (INSERT OR REPLACE): the previous state is still readable here, and the event is
-- undone with the statement if the insert fails.
CREATE TRIGGER webhook_sync_failed BEFORE INSERT ON sync_state
WHEN NEW.outcome IN ('failed', 'error') AND EXISTS (SELECT 1 FROM webhook_endpoints)
     AND NOT EXISTS (SELECT 1 FROM sync_state WHERE repo = NEW.repo AND outcome = NEW.outcome AND error = NEW.error)
BEGIN
    INSERT INTO webhook_events (type, subject, detail, occurred_at)
    VALUES ('sync.failed', NEW.repo,
            json_object('repository', NEW.repo, 'outcome', NEW.outcome, 'error', NEW.error, 'tag', NEW.tag,
                        'rules', json(NEW.rules), 'ids', json(NEW.ids)),
            NEW.checked_at);
END;

-- package.quarantined: an admin quarantined a package (version '') or one release
-- (migration 0013), or changed the public reason of a quarantine in force (the upsert's
-- update).
CREATE TRIGGER webhook_package_quarantined AFTER INSERT ON quarantines
WHEN EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
    VALUES ('package.quarantined', NEW.package_id, NEW.version,
            json_object('reason', NEW.reason, 'set_by', NEW.set_by), NEW.set_at);
END;
CREATE TRIGGER webhook_package_quarantine_reason AFTER UPDATE OF reason ON quarantines
WHEN OLD.reason IS NOT NEW.reason AND EXISTS (SELECT 1 FROM webhook_endpoints)
BEGIN
    INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
    VALUES ('package.quarantined', NEW.package_id, NEW.version,
            json_object('reason', NEW.reason, 'set_by', NEW.set_by), NEW.set_at);
END;
