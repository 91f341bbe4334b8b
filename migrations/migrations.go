// Package migrations holds the database schema as numbered, forward-only SQL files,
// embedded into the binary and applied by the store at start.
package migrations

import "embed"

// FS holds every NNNN_name.sql file of this folder.
//
//go:embed *.sql
var FS embed.FS
