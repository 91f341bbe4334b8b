-- Search rows get rowids in one band per kind (plugin 1, canvas 2, extension 3, other 4,
-- each band 2^40 wide), most downloaded first within a band: a kind filter becomes a rowid
-- range the full-text index answers itself, and "the first N matches by rowid" are the N
-- most downloaded, so a search matching most of the catalogue ranks a bounded window
-- (store.SearchCap) instead of every match. Existing rows are renumbered once here.
CREATE TEMP TABLE search_renumber AS
    SELECT id, name, description, author, categories, kind, updated_at, downloads,
        (CASE kind WHEN 'plugin' THEN 1 WHEN 'canvas' THEN 2 WHEN 'extension' THEN 3 ELSE 4 END) * 1099511627776
            + row_number() OVER (PARTITION BY kind ORDER BY CAST(downloads AS INTEGER) DESC, id) AS new_rowid
    FROM search;
DELETE FROM search;
INSERT INTO search (rowid, id, name, description, author, categories, kind, updated_at, downloads)
    SELECT new_rowid, id, name, description, author, categories, kind, updated_at, downloads FROM search_renumber;
DROP TABLE search_renumber;
