-- search_keys maps the lower-cased id and display name of every search row to its rowid:
-- "a package whose id or name equals the text comes first" becomes a key lookup instead
-- of reading every row whose id or name starts with the text's words (every row, for the
-- word all ids share). The store keeps it with the search table; existing rows are keyed
-- once here.
CREATE TABLE search_keys (
    key TEXT NOT NULL,
    search_rowid INTEGER NOT NULL,
    PRIMARY KEY (key, search_rowid)
) STRICT, WITHOUT ROWID;
INSERT OR IGNORE INTO search_keys (key, search_rowid) SELECT lower(id), rowid FROM search;
INSERT OR IGNORE INTO search_keys (key, search_rowid) SELECT lower(name), rowid FROM search;
CREATE INDEX search_keys_rowid ON search_keys (search_rowid);

-- The search table gets prefix indexes for prefixes of 2 to 8 characters: a search's
-- prefix pass ("as you type") then reads one index entry per word, streamed and skipped
-- through like a whole word's, instead of merging the matches of every word that starts
-- with it (every row, for "gen" over ids gen-...-NNNNNN whose descriptions say
-- "generated"). Rows keep their rowids (their kind band and download order).
CREATE VIRTUAL TABLE search_prefixed USING fts5 (
    id, name, description, author, categories,
    kind UNINDEXED, updated_at UNINDEXED, downloads UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '2 3 4 5 6 7 8'
);
INSERT INTO search_prefixed (rowid, id, name, description, author, categories, kind, updated_at, downloads)
    SELECT rowid, id, name, description, author, categories, kind, updated_at, downloads FROM search;
DROP TABLE search;
ALTER TABLE search_prefixed RENAME TO search;
