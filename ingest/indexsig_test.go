package ingest_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/ingest"
)

func mustKeys(tb testing.TB, name string) (note.Signer, note.Verifier) {
	tb.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := note.NewSigner(skey)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		tb.Fatal(err)
	}
	return s, v
}

var sigT0 = time.Date(2026, 9, 18, 6, 0, 12, 0, time.UTC)

const sigDoc = `{"schema_version":1,"generated_at":"2026-09-18T06:00:12Z","serial":7,"plugins":[]}`

func statementFor(body string) ingest.IndexStatement {
	sum := sha256.Sum256([]byte(body))
	return ingest.IndexStatement{Document: ingest.KandevDocument, SHA256: hex.EncodeToString(sum[:]), Serial: 7,
		GeneratedAt: sigT0, SignedAt: sigT0, Expires: sigT0.Add(7 * 24 * time.Hour),
		LogOrigin: "registry.example.com/log", LogSize: 3, LogRoot: tlog.RecordHash([]byte("root"))}
}

func TestIndexStatementRoundTrip(t *testing.T) {
	st := statementFor(sigDoc)
	got, err := ingest.ParseIndexStatement(st.Text())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseIndexStatementRefuses(t *testing.T) {
	good := string(statementFor(sigDoc).Text())
	tests := []struct {
		name, text, want string
	}{
		{"other header", strings.Replace(good, "pluginyard index signature v1", "go.sum database tree", 1), "first line"},
		{"no final newline", strings.TrimSuffix(good, "\n"), "lines ending in a newline"},
		{"extra line", good + "extra 1\n", "lines ending in a newline"},
		{"keys swapped", strings.Replace(strings.Replace(good, "serial 7", "XX", 1), "log_size 3", "serial 7", 1), "line 4"},
		{"double space", strings.Replace(good, "serial 7", "serial  7", 1), "line 4"},
		{"unknown document", strings.Replace(good, "document index.json", "document ../etc/passwd", 1), "document"},
		{"uppercase sha256", strings.Replace(good, statementFor(sigDoc).SHA256, strings.ToUpper(statementFor(sigDoc).SHA256), 1), "64 lowercase hex"},
		{"signed serial", strings.Replace(good, "serial 7", "serial +7", 1), "serial"},
		{"leading zero", strings.Replace(good, "log_size 3", "log_size 03", 1), "log_size"},
		{"negative size", strings.Replace(good, "log_size 3", "log_size -3", 1), "log_size"},
		{"local time", strings.Replace(good, "signed_at 2026-09-18T06:00:12Z", "signed_at 2026-09-18T08:00:12+02:00", 1), "signed_at"},
		{"expires before signed", strings.Replace(good, "expires 2026-09-25T06:00:12Z", "expires 2026-09-18T06:00:12Z", 1), "not after signed_at"},
		{"short root", strings.Replace(good, statementFor(sigDoc).LogRoot.String(), "AAAA", 1), "log_root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.ParseIndexStatement([]byte(tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseIndexStatement: %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestVerifyIndexSignature(t *testing.T) {
	signer, verifier := mustKeys(t, "registry.example.com/log")
	otherSigner, _ := mustKeys(t, "registry.example.com/log")
	sign := func(st ingest.IndexStatement, s note.Signer) []byte {
		msg, err := ingest.SignIndexStatement(st, s)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	good := statementFor(sigDoc)
	curupira := good
	curupira.Document = ingest.CurupiraDocument
	wrongSerial := statementFor(sigDoc)
	wrongSerial.Serial = 8
	tests := []struct {
		name     string
		sig      []byte
		body     string
		min      int64
		minGen   time.Time
		now      time.Time
		want     error
		contains string
	}{
		{"good", sign(good, signer), sigDoc, 7, sigT0, sigT0.Add(time.Hour), nil, ""},
		{"good, newer than seen", sign(good, signer), sigDoc, 3, sigT0.Add(time.Hour), sigT0, nil, ""},
		{"another key", sign(good, otherSigner), sigDoc, 0, time.Time{}, sigT0, ingest.ErrIndexSignature, "not signed by key"},
		{"not a note", []byte("hello\n"), sigDoc, 0, time.Time{}, sigT0, ingest.ErrIndexSignature, "not signed by key"},
		{"too large", bytes.Repeat([]byte("a"), ingest.MaxIndexSignatureBytes+1), sigDoc, 0, time.Time{}, sigT0, ingest.ErrIndexSignature, "8192-byte limit"},
		{"document changed", sign(good, signer), strings.Replace(sigDoc, "[]", "[ ]", 1), 0, time.Time{}, sigT0, ingest.ErrIndexMismatch, "changed after it was signed"},
		{"other document", sign(curupira, signer), sigDoc, 0, time.Time{}, sigT0, ingest.ErrIndexMismatch, "is about curupira/index.json"},
		{"serial not the document's", sign(wrongSerial, signer), sigDoc, 0, time.Time{}, sigT0, ingest.ErrIndexMismatch, "holds serial 7"},
		{"rollback", sign(good, signer), sigDoc, 8, time.Time{}, sigT0, ingest.ErrIndexRollback, "older than serial 8"},
		{"same serial, built earlier", sign(good, signer), sigDoc, 7, sigT0.Add(time.Minute), sigT0, ingest.ErrIndexRollback, "before the one seen"},
		{"expired", sign(good, signer), sigDoc, 0, time.Time{}, good.Expires, ingest.ErrIndexExpired, "expired at 2026-09-25T06:00:12Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ingest.VerifyIndexSignature(tt.sig, ingest.IndexCheck{Document: ingest.KandevDocument, Body: []byte(tt.body),
				Verifier: verifier, MinSerial: tt.min, MinGeneratedAt: tt.minGen, Now: tt.now})
			if tt.want == nil {
				if err != nil {
					t.Fatalf("VerifyIndexSignature: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("VerifyIndexSignature: %v, want %v mentioning %q", err, tt.want, tt.contains)
			}
		})
	}
}

// FuzzParseIndexStatement: the parser never panics, and what it accepts renders back to
// exactly the same text (one text per statement).
func FuzzParseIndexStatement(f *testing.F) {
	f.Add(statementFor(sigDoc).Text())
	f.Add([]byte("pluginyard index signature v1\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, text []byte) {
		st, err := ingest.ParseIndexStatement(text)
		if err != nil {
			return
		}
		if got := st.Text(); !bytes.Equal(got, text) {
			t.Errorf("accepted %q but renders %q", text, got)
		}
	})
}

// FuzzVerifyIndexSignature: arbitrary signature bytes never panic the verifier, and none
// that the key did not sign is accepted.
func FuzzVerifyIndexSignature(f *testing.F) {
	signer, verifier := mustKeys(f, "registry.example.com/log")
	good, err := ingest.SignIndexStatement(statementFor(sigDoc), signer)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte("pluginyard index signature v1\n\n— registry.example.com/log AAAA\n"))
	f.Fuzz(func(t *testing.T, sig []byte) {
		_, err := ingest.VerifyIndexSignature(sig, ingest.IndexCheck{Document: ingest.KandevDocument, Body: []byte(sigDoc), Verifier: verifier, Now: sigT0})
		if err == nil && !bytes.Equal(sig, good) {
			n, _ := note.Open(sig, note.VerifierList(verifier))
			if n == nil || n.Text != string(statementFor(sigDoc).Text()) {
				t.Errorf("accepted %q", sig)
			}
		}
	})
}
