// Package migrations holds the database schema as numbered, forward-only SQL files,
// embedded into the binary and applied by the store at start: SQLite's in this folder,
// PostgreSQL's (numbered on their own) in postgres/.
package migrations

import (
	"embed"
	"io/fs"
)

// FS holds every NNNN_name.sql file of this folder: the SQLite schema.
//
//go:embed *.sql
var FS embed.FS

// Postgres holds every NNNN_name.sql file of postgres/, at its root: the PostgreSQL schema.
var Postgres = mustSub(postgresDir, "postgres")

//go:embed postgres/*.sql
var postgresDir embed.FS

func mustSub(fsys embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err) // dir is a literal of this file, embedded above
	}
	return sub
}
