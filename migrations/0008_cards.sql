-- The card of a release: what lists and index documents need from its manifest (name,
-- description, categories, permissions, platforms, …), as JSON (store.Card), computed once
-- at publish so that a start or a rebuild never parses manifests. Releases published before
-- this migration have NULL here until the registry's first start computes theirs.
ALTER TABLE releases ADD COLUMN card TEXT CHECK (card IS NULL OR json_valid(card));
