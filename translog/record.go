// Package translog is the registry's transparency log: an append-only Merkle tree (RFC 6962
// hashing, golang.org/x/mod/sumdb/tlog) of every release event, its canonical record
// encoding, tiles and proofs computed from stored hashes, and checkpoints signed in the
// signed-note format (golang.org/x/mod/sumdb/note).
package translog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Kind is what a record says happened. The set is open: a verifier must accept a kind it
// does not know (a later registry may add one, such as quarantine) and treat it as an
// event it cannot interpret, never as a reason to reject the log.
type Kind string

// The kinds this registry writes.
const (
	KindPublish     Kind = "publish"     // a release was accepted: id, version, sha256, signer
	KindYank        Kind = "yank"        // a version was hidden from "latest"
	KindUnyank      Kind = "unyank"      // a yank was undone
	KindDelist      Kind = "delist"      // a version was yanked as part of delisting its package
	KindDeprecate   Kind = "deprecate"   // a package was marked deprecated (version empty)
	KindUndeprecate Kind = "undeprecate" // a deprecation was cleared (version empty)
	// KindQuarantine: an admin took a package (version empty) or one release (version and
	// its sha256) out of reach; KindUnquarantine: that quarantine was released.
	KindQuarantine   Kind = "quarantine"
	KindUnquarantine Kind = "unquarantine"
)

// Kinds are the kinds this registry writes, in the order docs/transparency.md lists them.
var Kinds = []Kind{KindPublish, KindYank, KindUnyank, KindDelist, KindDeprecate, KindUndeprecate, KindQuarantine, KindUnquarantine}

// Unsigned is the signer of a release published without a signature.
const Unsigned = "unsigned"

// Record is one log entry. Publish records carry Version, SHA256 and Signer; yank-like
// records carry Version and the release's SHA256; package-level records (deprecate) carry
// neither.
type Record struct {
	Kind    Kind      `json:"kind"`
	ID      string    `json:"id"`
	Version string    `json:"version,omitempty"`
	SHA256  string    `json:"sha256,omitempty"`
	Signer  string    `json:"signer,omitempty"`
	Time    time.Time `json:"time"`
}

// MaxRecordText bounds a leaf's size: ParseRecord refuses anything longer before decoding.
const MaxRecordText = 4096

var (
	kindRE = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	shaRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ErrMalformedRecord is returned by ParseRecord for bytes that are not a canonical record.
var ErrMalformedRecord = errors.New("translog: malformed record")

// RecordText is the exact bytes of r's leaf: one line of JSON with the fields in a fixed
// order and time in UTC with seconds, ending in a newline. The leaf hash is
// tlog.RecordHash(RecordText(r)).
func RecordText(r Record) []byte {
	r.Time = r.Time.UTC().Truncate(time.Second)
	b, err := json.Marshal(r)
	if err != nil { // a struct of strings and a time in range cannot fail
		panic(fmt.Sprintf("translog: encode record: %v", err))
	}
	return append(b, '\n')
}

// ParseRecord decodes a leaf, refusing anything RecordText would not have produced (unknown
// fields, other field order or spacing, a missing newline: the leaf must re-encode to
// itself), so that one record has exactly one encoding and so one leaf hash.
func ParseRecord(text []byte) (Record, error) {
	if len(text) > MaxRecordText {
		return Record{}, fmt.Errorf("%w: %d bytes, the limit is %d", ErrMalformedRecord, len(text), MaxRecordText)
	}
	var r Record
	if err := json.Unmarshal(text, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrMalformedRecord, err)
	}
	if err := r.Check(); err != nil {
		return Record{}, err
	}
	if !bytes.Equal(RecordText(r), text) {
		return Record{}, fmt.Errorf("%w: not in canonical form (want %q)", ErrMalformedRecord, RecordText(r))
	}
	return r, nil
}

// Check reports the first field of r that no record may have.
func (r Record) Check() error {
	switch {
	case !kindRE.MatchString(string(r.Kind)):
		return fmt.Errorf("%w: kind %q is not 1-32 lowercase letters, digits or dashes", ErrMalformedRecord, r.Kind)
	case r.ID == "":
		return fmt.Errorf("%w: id is empty", ErrMalformedRecord)
	case r.SHA256 != "" && !shaRE.MatchString(r.SHA256):
		return fmt.Errorf("%w: sha256 %q is not 64 lowercase hex digits", ErrMalformedRecord, r.SHA256)
	case r.Kind == KindPublish && (r.Version == "" || r.SHA256 == "" || r.Signer == ""):
		return fmt.Errorf("%w: a publish record needs version, sha256 and signer", ErrMalformedRecord)
	case r.Time.IsZero():
		return fmt.Errorf("%w: time is missing", ErrMalformedRecord)
	}
	return nil
}
