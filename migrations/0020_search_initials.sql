-- The search table also indexes one-letter prefixes: a text of one-letter words (which a
-- search reads as prefixes, "as you type") merged, for each, every indexed word with that
-- initial, once for the match and once for its score: eight of them cost about 60 ms of CPU
-- at 50k rows, the costliest anonymous search left (store.SearchWords). With the index each
-- initial is one entry, read as a whole word's is: about 17 ms, for an index about 14 %
-- larger. Rows keep their rowids (their kind band and download order, and search_keys'
-- references), so the search table's digest (search.sum) still describes them.
CREATE VIRTUAL TABLE search_initials USING fts5 (
    id, name, description, author, categories,
    kind UNINDEXED, updated_at UNINDEXED, downloads UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2',
    prefix = '1 2 3 4 5 6 7 8'
);
INSERT INTO search_initials (rowid, id, name, description, author, categories, kind, updated_at, downloads)
    SELECT rowid, id, name, description, author, categories, kind, updated_at, downloads FROM search;
DROP TABLE search;
ALTER TABLE search_initials RENAME TO search;
