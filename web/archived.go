package web

// Archived is an archived package's notice: its owner expects no more releases.
type Archived struct {
	Since string // the date it was archived, as 2026-12-01
}
