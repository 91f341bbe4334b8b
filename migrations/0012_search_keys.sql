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
