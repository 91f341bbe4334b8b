package web

// QuarantineNotice is one quarantine in force on a package page (docs/quarantine.md): the
// whole package (Version "") or one release, with the administrators' public reason.
type QuarantineNotice struct {
	Version string
	Reason  string
	Since   string // already formatted by the caller
}

// wholeQuarantine reports whether one of qs quarantines the whole package: the page then
// offers nothing to install.
func wholeQuarantine(qs []QuarantineNotice) bool {
	for _, q := range qs {
		if q.Version == "" {
			return true
		}
	}
	return false
}
