-- What a release page shows, fixed at publish: the README rendered to sanitized HTML
-- (readme.Render; NULL only for a release without README.md) and the verification facts
-- (JSON, see store.Facts; NULL for releases published before this migration, whose facts
-- were not recorded). Existing READMEs are rendered here, once, by the Go function the store
-- registers with the SQLite driver, so no page view renders Markdown.
ALTER TABLE releases ADD COLUMN readme_html BLOB;
ALTER TABLE releases ADD COLUMN facts TEXT CHECK (facts IS NULL OR json_valid(facts));
UPDATE releases SET readme_html = registry_render_readme(readme) WHERE readme IS NOT NULL;
