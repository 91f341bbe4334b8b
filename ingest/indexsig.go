package ingest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// The documents an index signature can name: the paths they are served at, relative to the
// registry (or mirror) root, so that a mirror served elsewhere still verifies.
const (
	KandevDocument   = "index.json"
	CurupiraDocument = "curupira/index.json"
)

// indexStatementHeader is the first line of an index signature's text; a verifier refuses
// any other, so a checkpoint or any other note signed by the same key is never taken for one.
const indexStatementHeader = "pluginyard index signature v1"

// MaxIndexSignatureBytes bounds a signature note a verifier reads: the text is ten short
// lines and a registry signs with one key, so anything larger is not one of ours.
const MaxIndexSignatureBytes = 8 << 10

// IndexStatement is what an index signature asserts about one index document: its exact
// bytes (sha256), the serial and generated_at inside it, how long the assertion holds, and
// the log checkpoint the document was built from (every release it lists is in the log at
// or before LogSize).
type IndexStatement struct {
	Document    string    // KandevDocument or CurupiraDocument
	SHA256      string    // of the document's exact bytes, 64 lowercase hex digits
	Serial      int64     // the document's serial
	GeneratedAt time.Time // the document's generated_at
	SignedAt    time.Time
	Expires     time.Time // a verifier refuses the statement from then on (a frozen mirror)
	LogOrigin   string    // the log's origin line
	LogSize     int64     // the checkpoint's tree size
	LogRoot     tlog.Hash // the checkpoint's root hash
}

// Sentinel errors of VerifyIndexSignature; every error it returns wraps exactly one, with a
// message saying what was found and what was expected.
var (
	ErrIndexSignature = errors.New("index signature invalid")        // not a note of the key, or not a statement
	ErrIndexMismatch  = errors.New("index signature does not match") // signs other bytes, or another document
	ErrIndexRollback  = errors.New("index rolled back")              // older than one seen before
	ErrIndexExpired   = errors.New("index signature expired")        // a frozen registry or mirror
)

const statementTime = time.RFC3339

// statementKeys are the lines of a statement after its header, in their order.
var statementKeys = []string{"document", "sha256", "serial", "generated_at", "signed_at", "expires", "log_origin", "log_size", "log_root"}

// Text renders the statement as the text of a signed note: the header, then one
// "key value" line per field, in a fixed order.
func (st IndexStatement) Text() []byte {
	var b bytes.Buffer
	b.WriteString(indexStatementHeader + "\n")
	vals := []string{st.Document, st.SHA256, strconv.FormatInt(st.Serial, 10),
		st.GeneratedAt.UTC().Format(statementTime), st.SignedAt.UTC().Format(statementTime), st.Expires.UTC().Format(statementTime),
		st.LogOrigin, strconv.FormatInt(st.LogSize, 10), st.LogRoot.String()}
	for i, k := range statementKeys {
		fmt.Fprintf(&b, "%s %s\n", k, vals[i])
	}
	return b.Bytes()
}

// ParseIndexStatement parses the text of an index signature: exactly the lines Text
// writes, in its order, each value well-formed. It accepts nothing else, so that two
// different texts never mean the same statement.
func ParseIndexStatement(text []byte) (IndexStatement, error) {
	var st IndexStatement
	lines := strings.Split(string(text), "\n")
	if len(lines) != len(statementKeys)+2 || lines[len(lines)-1] != "" {
		return st, fmt.Errorf("index statement: want %d lines ending in a newline, found %d", len(statementKeys)+1, len(lines)-1)
	}
	if lines[0] != indexStatementHeader {
		return st, fmt.Errorf("index statement: first line %.60q, want %q", lines[0], indexStatementHeader)
	}
	vals := make([]string, len(statementKeys))
	for i, k := range statementKeys {
		key, val, ok := strings.Cut(lines[i+1], " ")
		if !ok || key != k || val == "" || strings.TrimSpace(val) != val {
			return st, fmt.Errorf("index statement: line %d is %.60q, want %q then one space and a value", i+2, lines[i+1], k)
		}
		vals[i] = val
	}
	return parseStatementValues(vals)
}

func parseStatementValues(v []string) (IndexStatement, error) {
	st := IndexStatement{Document: v[0], SHA256: v[1], LogOrigin: v[6]}
	if st.Document != KandevDocument && st.Document != CurupiraDocument {
		return st, fmt.Errorf("index statement: document %.60q, want %q or %q", st.Document, KandevDocument, CurupiraDocument)
	}
	if !isSHA256Hex(st.SHA256) {
		return st, fmt.Errorf("index statement: sha256 %.80q, want 64 lowercase hex digits", st.SHA256)
	}
	var err error
	if st.Serial, err = parseCount("serial", v[2]); err != nil {
		return st, err
	}
	if st.LogSize, err = parseCount("log_size", v[7]); err != nil {
		return st, err
	}
	times := []*time.Time{&st.GeneratedAt, &st.SignedAt, &st.Expires}
	for i, name := range []string{"generated_at", "signed_at", "expires"} {
		if *times[i], err = parseStatementTime(name, v[3+i]); err != nil {
			return st, err
		}
	}
	if !st.Expires.After(st.SignedAt) {
		return st, fmt.Errorf("index statement: expires %s is not after signed_at %s", v[5], v[4])
	}
	if st.LogRoot, err = tlog.ParseHash(v[8]); err != nil || st.LogRoot.String() != v[8] {
		return st, fmt.Errorf("index statement: log_root %.60q, want a base64 SHA-256 hash (44 characters)", v[8])
	}
	return st, nil
}

// parseCount parses a non-negative decimal without sign or leading zeros.
func parseCount(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || strconv.FormatInt(n, 10) != s {
		return 0, fmt.Errorf("index statement: %s %.30q, want a non-negative decimal integer", name, s)
	}
	return n, nil
}

func parseStatementTime(name, s string) (time.Time, error) {
	t, err := time.Parse(statementTime, s)
	if err != nil || t.UTC().Format(statementTime) != s {
		return time.Time{}, fmt.Errorf("index statement: %s %.40q, want an RFC 3339 UTC time like 2026-09-18T06:00:12Z", name, s)
	}
	return t, nil
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SignIndexStatement signs st as a note with signer (the registry's log key).
func SignIndexStatement(st IndexStatement, signer note.Signer) ([]byte, error) {
	msg, err := note.Sign(&note.Note{Text: string(st.Text())}, signer)
	if err != nil {
		return nil, fmt.Errorf("ingest: sign %s: %w", st.Document, err)
	}
	return msg, nil
}

// IndexCheck is what a verifier holds when it checks an index signature: the document it
// fetched, the registry's key, and what it saw before.
type IndexCheck struct {
	Document string // KandevDocument or CurupiraDocument
	Body     []byte // the document's bytes, exactly as fetched
	Verifier note.Verifier
	// MinSerial is the highest serial seen before; an older one is a rollback.
	MinSerial int64
	// MinGeneratedAt is the generated_at seen with MinSerial: the same serial built earlier
	// is a replay too.
	MinGeneratedAt time.Time
	Now            time.Time
}

// VerifyIndexSignature checks sig, an index signature, against c: a note of c.Verifier's
// key whose statement names c.Document, the sha256 of c.Body, the serial and generated_at
// inside c.Body, a serial (and generated_at) no older than seen, and an expiry after c.Now.
func VerifyIndexSignature(sig []byte, c IndexCheck) (IndexStatement, error) {
	st, err := openIndexSignature(sig, c.Verifier)
	if err != nil {
		return st, err
	}
	if err := statementMatches(st, c.Document, c.Body); err != nil {
		return st, err
	}
	switch {
	case st.Serial < c.MinSerial:
		return st, fmt.Errorf("%w: %s has serial %d, older than serial %d seen before; a registry's serial only grows, so this is a replayed old document", ErrIndexRollback, c.Document, st.Serial, c.MinSerial)
	case st.Serial == c.MinSerial && st.GeneratedAt.Before(c.MinGeneratedAt):
		return st, fmt.Errorf("%w: %s with serial %d was generated at %s, before the one seen at %s; this is a replayed old document", ErrIndexRollback, c.Document, st.Serial, st.GeneratedAt.Format(statementTime), c.MinGeneratedAt.Format(statementTime))
	case !c.Now.Before(st.Expires):
		return st, fmt.Errorf("%w: the signature of %s (serial %d) expired at %s, %s ago; the registry or mirror stopped re-signing (frozen), or the clock is wrong", ErrIndexExpired, c.Document, st.Serial, st.Expires.Format(statementTime), c.Now.Sub(st.Expires).Round(time.Second))
	}
	return st, nil
}

// openIndexSignature checks the note's signature and parses its statement.
func openIndexSignature(sig []byte, v note.Verifier) (IndexStatement, error) {
	if len(sig) > MaxIndexSignatureBytes {
		return IndexStatement{}, fmt.Errorf("%w: %d bytes, over the %d-byte limit of a signature note", ErrIndexSignature, len(sig), MaxIndexSignatureBytes)
	}
	n, err := note.Open(sig, note.VerifierList(v))
	if err != nil {
		return IndexStatement{}, fmt.Errorf("%w: not signed by key %s: %v", ErrIndexSignature, v.Name(), err)
	}
	st, err := ParseIndexStatement([]byte(n.Text))
	if err != nil {
		return st, fmt.Errorf("%w: %v", ErrIndexSignature, err)
	}
	return st, nil
}

// statementMatches checks that st is about body: its name, its sha256, and the serial and
// generated_at the document itself holds.
func statementMatches(st IndexStatement, doc string, body []byte) error {
	sum := sha256.Sum256(body)
	got := hex.EncodeToString(sum[:])
	if st.Document != doc {
		return fmt.Errorf("%w: the signature is about %s, not %s", ErrIndexMismatch, st.Document, doc)
	}
	if st.SHA256 != got {
		return fmt.Errorf("%w: %s (%d bytes) has sha256 %s, the signature is over %s: the document was changed after it was signed", ErrIndexMismatch, doc, len(body), got, st.SHA256)
	}
	var head struct {
		Serial      int64  `json:"serial"`
		GeneratedAt string `json:"generated_at"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return fmt.Errorf("%w: %s does not decode: %v", ErrIndexMismatch, doc, err)
	}
	if head.Serial != st.Serial || head.GeneratedAt != st.GeneratedAt.UTC().Format(statementTime) {
		return fmt.Errorf("%w: %s holds serial %d generated at %s, the signature says serial %d generated at %s", ErrIndexMismatch, doc, head.Serial, head.GeneratedAt, st.Serial, st.GeneratedAt.UTC().Format(statementTime))
	}
	return nil
}
