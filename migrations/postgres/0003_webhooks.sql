-- The webhook outbox's triggers (SQLite's are in migration 0018; see docs/webhooks.md), as
-- PL/pgSQL: each event is written in the transaction of the change it reports, and only
-- while at least one endpoint is registered. They write what SQLite's write: the same
-- rows (type, subject, version, occurred_at), the same detail bytes (webhook_json writes
-- json_object's compact form, keys in order) and, within a transaction, the same order
-- (one event per changed row, statement after statement).

-- webhook_json is SQLite's json_object(k1, v1, k2, v2, …) for values already JSON text
-- (to_json(x)::text, or a json column's text, kept byte for byte as json(x) keeps the
-- compact JSON the store writes); a NULL value is null.
CREATE FUNCTION webhook_json(VARIADIC kv text[]) RETURNS json LANGUAGE sql IMMUTABLE AS $$
    SELECT ('{' || coalesce(string_agg(to_json(kv[i])::text || ':' || coalesce(kv[i + 1], 'null'), ',' ORDER BY i), '') || '}')::json
    FROM generate_series(1, coalesce(array_length(kv, 1), 0), 2) AS i
$$;

-- webhook_now is strftime('%Y-%m-%dT%H:%M:%SZ', 'now'): the statement's time, UTC.
CREATE FUNCTION webhook_now() RETURNS text LANGUAGE sql STABLE AS $$
    SELECT to_char(statement_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;

-- release.published: a new release row (a repeated identical publish inserts none).
CREATE FUNCTION webhook_release_published() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints) THEN
        INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
        VALUES ('release.published', NEW.package_id, NEW.version,
                webhook_json('kind', to_json(NEW.kind)::text, 'sha256', to_json(NEW.sha256)::text,
                             'size', to_json(NEW.size)::text, 'published_by', to_json(NEW.published_by)::text),
                NEW.created_at);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_release_published AFTER INSERT ON releases
    FOR EACH ROW EXECUTE FUNCTION webhook_release_published();

-- release.yanked: a live release became yanked (one yank, or each version of a yank-all).
CREATE FUNCTION webhook_release_yanked() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints) THEN
        INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
        VALUES ('release.yanked', NEW.package_id, NEW.version,
                webhook_json('reason', to_json(coalesce(NEW.yank_reason, ''))::text), webhook_now());
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_release_yanked AFTER UPDATE OF yanked ON releases
    FOR EACH ROW WHEN (NEW.yanked = 1 AND OLD.yanked = 0) EXECUTE FUNCTION webhook_release_yanked();

-- package.deprecated: a package became deprecated, or its reason changed.
CREATE FUNCTION webhook_package_deprecated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints) THEN
        INSERT INTO webhook_events (type, subject, detail, occurred_at)
        VALUES ('package.deprecated', NEW.id,
                webhook_json('reason', to_json(NEW.deprecated_reason)::text,
                             'replacement', to_json(coalesce(NEW.deprecated_replacement, ''))::text),
                webhook_now());
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_package_deprecated AFTER UPDATE OF deprecated_reason ON packages
    FOR EACH ROW WHEN (NEW.deprecated_reason IS NOT NULL AND OLD.deprecated_reason IS DISTINCT FROM NEW.deprecated_reason)
    EXECUTE FUNCTION webhook_package_deprecated();

-- verification.failed: a refused publish, pushed or pulled (its audit row). The target is
-- id@version once the package was read, else the uploaded file name (cut to the subject's
-- limit: a trigger that failed a CHECK would lose the audit row with the event).
CREATE FUNCTION webhook_verification_failed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    sep integer := strpos(NEW.target, '@');
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints) THEN
        INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
        VALUES ('verification.failed',
                substr(coalesce(nullif(CASE WHEN sep > 1 THEN substr(NEW.target, 1, sep - 1) ELSE NEW.target END, ''), '-'), 1, 300),
                CASE WHEN sep > 1 THEN substr(NEW.target, sep + 1, 128) ELSE '' END,
                webhook_json('target', to_json(substr(NEW.target, 1, 300))::text, 'actor', to_json(NEW.actor)::text,
                             'refusal', NEW.detail::text),
                NEW.at);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_verification_failed AFTER INSERT ON audit
    FOR EACH ROW WHEN (NEW.action = 'publish' AND NEW.outcome = 'refused') EXECUTE FUNCTION webhook_verification_failed();

-- sync.failed: a repository's check failed (refused) or errored, when that is news: the
-- previous state was not the same failure. BEFORE INSERT because PutSyncState upserts the
-- row (INSERT … ON CONFLICT DO UPDATE, which fires BEFORE INSERT triggers for every row
-- it proposes): the previous state is still readable here, and the event is undone with
-- the statement if the insert fails.
CREATE FUNCTION webhook_sync_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints)
       AND NOT EXISTS (SELECT 1 FROM sync_state WHERE repo = NEW.repo AND outcome = NEW.outcome AND error = NEW.error) THEN
        INSERT INTO webhook_events (type, subject, detail, occurred_at)
        VALUES ('sync.failed', NEW.repo,
                webhook_json('repository', to_json(NEW.repo)::text, 'outcome', to_json(NEW.outcome)::text,
                             'error', to_json(NEW.error)::text, 'tag', to_json(NEW.tag)::text,
                             'rules', NEW.rules::text, 'ids', NEW.ids::text),
                NEW.checked_at);
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER webhook_sync_failed BEFORE INSERT ON sync_state
    FOR EACH ROW WHEN (NEW.outcome IN ('failed', 'error')) EXECUTE FUNCTION webhook_sync_failed();

-- package.quarantined: an admin quarantined a package (version '') or one release, or
-- changed the public reason of a quarantine in force (the upsert's update).
CREATE FUNCTION webhook_package_quarantined() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM webhook_endpoints) THEN
        INSERT INTO webhook_events (type, subject, version, detail, occurred_at)
        VALUES ('package.quarantined', NEW.package_id, NEW.version,
                webhook_json('reason', to_json(NEW.reason)::text, 'set_by', to_json(NEW.set_by)::text), NEW.set_at);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_package_quarantined AFTER INSERT ON quarantines
    FOR EACH ROW EXECUTE FUNCTION webhook_package_quarantined();
CREATE TRIGGER webhook_package_quarantine_reason AFTER UPDATE OF reason ON quarantines
    FOR EACH ROW WHEN (OLD.reason IS DISTINCT FROM NEW.reason) EXECUTE FUNCTION webhook_package_quarantined();
