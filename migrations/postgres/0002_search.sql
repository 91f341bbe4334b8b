-- Full-text search over the latest release of each package, PostgreSQL's own (SQLite's is
-- FTS5: migrations 0001, 0011, 0012). The rows are SQLite's, rowids included: one band
-- per kind (plugin 1, canvas 2, extension 3, other 4, each 2^40 wide), most downloaded
-- first within a band, so that a kind filter is a rowid range and "the first N matches by
-- rowid" are the N most downloaded (store.SearchCap). doc is the row's words as the store
-- folds them (store/search_postgres.go), weighted per column (id A, name B, author and
-- categories C, description D), under a GIN index. Text columns use the "C" collation:
-- sorts and lower() then behave as SQLite's (bytes; ASCII letters only), whatever the
-- database's default collation.
CREATE TABLE search (
    rowid       BIGINT   PRIMARY KEY,
    id          TEXT     COLLATE "C" NOT NULL,
    name        TEXT     COLLATE "C" NOT NULL,
    description TEXT     COLLATE "C" NOT NULL,
    author      TEXT     COLLATE "C" NOT NULL,
    categories  TEXT     COLLATE "C" NOT NULL,
    kind        TEXT     COLLATE "C" NOT NULL,
    updated_at  TEXT     COLLATE "C" NOT NULL,
    downloads   BIGINT   NOT NULL,
    doc         tsvector NOT NULL
);
CREATE INDEX search_doc ON search USING gin (doc);
CREATE INDEX search_id ON search (id);

-- search_keys maps the lower-cased id and display name of every search row to its rowid:
-- an exact match (a package whose id or name equals the text comes first) is a key
-- lookup (migration 0012's).
CREATE TABLE search_keys (
    key          TEXT   COLLATE "C" NOT NULL,
    search_rowid BIGINT NOT NULL,
    PRIMARY KEY (key, search_rowid)
);
CREATE INDEX search_keys_rowid ON search_keys (search_rowid);
