package signature

// Pin is the identity pinned by the first verified release of an entry (trust on first
// use): GitHub's numeric repository and owner ids, which survive renames and tell a
// re-created repository of the same name from the original.
type Pin struct {
	RepositoryID string `json:"repository_id"`
	OwnerID      string `json:"owner_id"`
}

// PinOf returns the pin a verified Sigstore result establishes; ok is false when the
// certificate carries neither id (nothing to pin).
func PinOf(r *Result) (p Pin, ok bool) {
	if r == nil || (r.RepositoryID == "" && r.OwnerID == "") {
		return Pin{}, false
	}
	return Pin{RepositoryID: r.RepositoryID, OwnerID: r.OwnerID}, true
}

// CheckPin compares a verified result with the pinned ids. An empty pinned id is not
// checked (nothing pinned yet). A difference is refused with RuleChanged until an admin
// re-pins.
func CheckPin(pinned Pin, r *Result) *Error {
	if pinned.RepositoryID != "" && pinned.RepositoryID != r.RepositoryID {
		return refuse(RuleChanged, "repository id "+pinned.RepositoryID, "repository id "+orNone(r.RepositoryID),
			"the signing repository is not the one pinned by earlier releases (deleted and re-created, or transferred); an admin must re-pin with `registry pin reset`")
	}
	if pinned.OwnerID != "" && pinned.OwnerID != r.OwnerID {
		return refuse(RuleChanged, "owner id "+pinned.OwnerID, "owner id "+orNone(r.OwnerID),
			"the repository owner is not the one pinned by earlier releases; an admin must re-pin with `registry pin reset`")
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
