package translog_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/pluginyard/registry/translog"
)

func mustKey(tb testing.TB, name string) *translog.Key {
	tb.Helper()
	k, err := translog.LoadKey(tb.TempDir(), "", name)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func TestCheckpointVerifiesWithPrintedKey(t *testing.T) {
	k := mustKey(t, "plugins.example.com/log")
	hash := tlog.RecordHash([]byte("x\n"))
	cp, err := translog.SignCheckpoint(k.Signer, 7, hash)
	if err != nil {
		t.Fatal(err)
	}
	v, err := note.NewVerifier(k.VerifierKey) // what `registry log key` prints
	if err != nil {
		t.Fatal(err)
	}
	got, err := translog.OpenCheckpoint(cp.Note, v)
	if err != nil {
		t.Fatalf("OpenCheckpoint: %v\n%s", err, cp.Note)
	}
	if diff := cmp.Diff(cp, got); diff != "" {
		t.Errorf("checkpoint (-signed +opened):\n%s", diff)
	}
	if !bytes.HasPrefix(cp.Note, translog.FormatCheckpoint("plugins.example.com/log", 7, hash)) {
		t.Errorf("note does not start with the transparency-dev body:\n%s", cp.Note)
	}
}

func TestOpenCheckpointRefuses(t *testing.T) {
	k := mustKey(t, "plugins.example.com/log")
	other := mustKey(t, "plugins.example.com/log")
	hash := tlog.RecordHash([]byte("x\n"))
	cp, err := translog.SignCheckpoint(k.Signer, 7, hash)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := note.Sign(&note.Note{Text: string(translog.FormatCheckpoint("another.example/log", 7, hash))}, k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		msg []byte
		v   note.Verifier
	}{
		"other key":      {cp.Note, other.Verifier},
		"size changed":   {bytes.Replace(cp.Note, []byte("\n7\n"), []byte("\n8\n"), 1), k.Verifier},
		"foreign origin": {foreign, k.Verifier},
		"not a note":     {[]byte("hello\n"), k.Verifier},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := translog.OpenCheckpoint(c.msg, c.v); !errors.Is(err, translog.ErrCheckpoint) {
				t.Errorf("OpenCheckpoint = %v, want ErrCheckpoint", err)
			}
		})
	}
}

func TestParseCheckpoint(t *testing.T) {
	hash := tlog.RecordHash([]byte("x\n"))
	good := string(translog.FormatCheckpoint("o/log", 12, hash))
	origin, size, h, err := translog.ParseCheckpoint([]byte(good + "extension line\n"))
	if err != nil || origin != "o/log" || size != 12 || h != hash {
		t.Errorf("ParseCheckpoint = %q %d %v %v", origin, size, h, err)
	}
	for name, body := range map[string]string{
		"two lines":    "o/log\n12\n",
		"no origin":    "\n12\n" + strings.SplitN(good, "\n", 3)[2],
		"size":         strings.Replace(good, "\n12\n", "\n012\n", 1),
		"negative":     strings.Replace(good, "\n12\n", "\n-1\n", 1),
		"short hash":   "o/log\n12\nAAAA\n",
		"no newline":   strings.TrimSuffix(good, "\n"),
		"hash base64":  "o/log\n12\n!!!!\n",
		"loose base64": "o/log\n12\n" + strings.Repeat("A", 42) + "B=\n", // padding bits set: a second spelling of one hash
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, _, err := translog.ParseCheckpoint([]byte(body)); !errors.Is(err, translog.ErrCheckpoint) {
				t.Errorf("ParseCheckpoint(%q) = %v, want ErrCheckpoint", body, err)
			}
		})
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add(translog.FormatCheckpoint("o/log", 12, tlog.Hash{}))
	f.Fuzz(func(t *testing.T, body []byte) {
		origin, size, hash, err := translog.ParseCheckpoint(body)
		if err != nil {
			return
		}
		if !bytes.HasPrefix(body, translog.FormatCheckpoint(origin, size, hash)) {
			t.Fatalf("parsed %q as %q %d %v, which formats differently", body, origin, size, hash)
		}
	})
}

func TestLoadKeyCreatesOnceWithMode0600(t *testing.T) {
	dir := t.TempDir()
	k1, err := translog.LoadKey(dir, "", "plugins.example.com/log")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, translog.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	k2, err := translog.LoadKey(dir, "", "another-name/log")
	if err != nil {
		t.Fatal(err)
	}
	if k1.VerifierKey != k2.VerifierKey || k2.Signer.Name() != "plugins.example.com/log" {
		t.Errorf("second load made another key: %s then %s", k1.VerifierKey, k2.VerifierKey)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data directory holds %d files, want only %s", len(entries), translog.KeyFile)
	}
}

func TestLoadKeyGiven(t *testing.T) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "given.example/log")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(file, []byte(skey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, given := range map[string]string{"value": skey, "file": file} {
		k, err := translog.LoadKey(dir, given, "ignored/log")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if k.VerifierKey != vkey {
			t.Errorf("%s: verifier key %s, want %s", name, k.VerifierKey, vkey)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, translog.KeyFile)); err == nil {
		t.Error("a given key still wrote a key file into the data directory")
	}
	mistyped := strings.Replace(skey, "PRIVATE+KEY+", "PRIVATE+KYE+", 1)
	_, err = translog.LoadKey(dir, mistyped, "x/log")
	if err == nil || strings.Contains(err.Error(), mistyped[20:]) {
		t.Errorf("a mistyped key: err = %v; want an error that does not show the value", err)
	}
	if _, err := translog.LoadKey(dir, "PRIVATE+KEY+x+00000000+AAAA", "x/log"); err == nil {
		t.Error("a malformed key was accepted")
	}
}

func TestKeyName(t *testing.T) {
	for in, want := range map[string]string{
		"https://plugins.example.com":      "plugins.example.com/log",
		"https://plugins.example.com/":     "plugins.example.com/log",
		"http://127.0.0.1:8080":            "127.0.0.1:8080/log",
		"https://example.com/registry":     "example.com/registry/log",
		"":                                 "registry/log",
		"https://exa mple.com":             "registry/log",
		"https://user+x@plugins.example.c": "registry/log",
	} {
		if got := translog.KeyName(in); got != want {
			t.Errorf("KeyName(%q) = %q, want %q", in, got, want)
		}
	}
}
