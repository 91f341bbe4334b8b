package ingest

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

// signingService is a Service whose documents are signed with a fresh key, against a
// checkpoint of size *size, on a clock the test moves.
func signingService(t *testing.T, size *int64, now *time.Time) (*Service, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "registry.test/log")
	if err != nil {
		t.Fatal(err)
	}
	signer, _ := note.NewSigner(skey)
	verifier, _ := note.NewVerifier(vkey)
	cfg := Config{IndexSigner: signer, IndexSignatureTTL: 7 * 24 * time.Hour,
		LogCheckpoint: func(context.Context) (translog.Checkpoint, error) {
			return translog.SignCheckpoint(signer, *size, tlog.RecordHash([]byte{byte(*size)}))
		}}
	svc := MustService(t, MustStore(t, t.TempDir()), cfg)
	svc.now = func() time.Time { return *now }
	return svc, verifier
}

func verifyServed(t *testing.T, svc *Service, v note.Verifier, doc string, body []byte, now time.Time) IndexStatement {
	t.Helper()
	sig, err := svc.IndexSignature(doc)
	if err != nil {
		t.Fatalf("IndexSignature(%s): %v", doc, err)
	}
	st, err := VerifyIndexSignature(sig, IndexCheck{Document: doc, Body: body, Verifier: v, Now: now})
	if err != nil {
		t.Fatalf("verify %s: %v", doc, err)
	}
	return st
}

func TestDocumentsAreSignedWithTheirCheckpoint(t *testing.T) {
	size, now := int64(0), time.Date(2026, 9, 18, 6, 0, 12, 0, time.UTC)
	svc, v := signingService(t, &size, &now)
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	size = 1
	mustPublish(t, svc, "1.0.0", "Says hello.")
	docs := svc.Documents()
	for doc, body := range map[string][]byte{KandevDocument: docs.Kandev.Body.Bytes(), CurupiraDocument: docs.Curupira.Body.Bytes()} {
		st := verifyServed(t, svc, v, doc, body, now)
		if st.Serial != docs.Serial || st.LogSize != 1 || st.LogRoot != tlog.RecordHash([]byte{1}) || !st.Expires.Equal(now.Add(7*24*time.Hour)) {
			t.Errorf("%s: statement %+v, want serial %d, log size 1 and its root, expiry in 7 days", doc, st, docs.Serial)
		}
	}
}

// TestSignatureIsRefreshedBeforeExpiry: documents are signed when first asked for; the same
// documents, asked for after a day, come with a signature whose expiry moved on; before a
// day, the same signature.
func TestSignatureIsRefreshedBeforeExpiry(t *testing.T) {
	size, now := int64(0), time.Date(2026, 9, 18, 6, 0, 12, 0, time.UTC)
	t0 := now
	svc, v := signingService(t, &size, &now)
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := svc.Documents().Kandev.Body.Bytes()
	if st := verifyServed(t, svc, v, KandevDocument, body, now); !st.SignedAt.Equal(t0) { // signed on first request
		t.Errorf("first request: signed at %s, want %s", st.SignedAt, t0)
	}
	now = t0.Add(23 * time.Hour)
	if st := verifyServed(t, svc, v, KandevDocument, body, now); !st.SignedAt.Equal(t0) {
		t.Errorf("after 23 h: signed at %s, want the first signature (%s)", st.SignedAt, t0)
	}
	now = t0.Add(6*24*time.Hour + 23*time.Hour) // the first signature expires in an hour
	st := verifyServed(t, svc, v, KandevDocument, body, now)
	if !st.SignedAt.Equal(now) || !st.Expires.Equal(now.Add(7*24*time.Hour)) {
		t.Errorf("after 6 d 23 h: signed at %s expiring %s, want re-signed now (%s) for 7 more days", st.SignedAt, st.Expires, now)
	}
	if !st.GeneratedAt.Equal(t0) {
		t.Errorf("re-signing changed generated_at to %s; the document is the same", st.GeneratedAt)
	}
}

func TestUnsignedWithoutKeyAndRefusedWithoutLog(t *testing.T) {
	svc := MustService(t, MustStore(t, t.TempDir()), Config{})
	if err := svc.Rebuild(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.IndexSignature(KandevDocument); !errors.Is(err, ErrIndexUnsigned) {
		t.Errorf("no key: %v, want ErrIndexUnsigned", err)
	}
	signer, _ := mustSigner(t)
	svc = MustService(t, MustStore(t, t.TempDir()), Config{IndexSigner: signer})
	if err := svc.Rebuild(context.Background()); err == nil || svc.Documents() != nil {
		t.Errorf("a key without a log: rebuild %v with documents %v, want refused and nothing in force", err, svc.Documents())
	}
}

func mustSigner(t *testing.T) (note.Signer, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "registry.test/log")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := note.NewSigner(skey)
	v, _ := note.NewVerifier(vkey)
	return s, v
}
