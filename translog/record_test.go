package translog_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/translog"
)

var at = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

const sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestRecordTextRoundTrip(t *testing.T) {
	for _, r := range []translog.Record{
		{Kind: translog.KindPublish, ID: "acme-hello", Version: "1.2.0", SHA256: sha, Signer: translog.Unsigned, Time: at},
		{Kind: translog.KindPublish, ID: "@acme/ext", Version: "0.3.0-rc.1+b", SHA256: sha, Signer: "https://github.com/acme/x/.github/workflows/r.yml@refs/tags/v1", Time: at},
		{Kind: translog.KindYank, ID: "acme-hello", Version: "1.2.0", SHA256: sha, Time: at},
		{Kind: translog.KindDeprecate, ID: "acme-hello", Time: at},
		{Kind: "quarantine", ID: "acme-hello", Version: "1.2.0", SHA256: sha, Time: at}, // a kind added later
	} {
		t.Run(string(r.Kind), func(t *testing.T) {
			text := translog.RecordText(r)
			got, err := translog.ParseRecord(text)
			if err != nil {
				t.Fatalf("ParseRecord(%q): %v", text, err)
			}
			if diff := cmp.Diff(r, got); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRecordTextIsStable(t *testing.T) {
	r := translog.Record{Kind: translog.KindPublish, ID: "acme-hello", Version: "1.2.0", SHA256: sha, Signer: translog.Unsigned,
		Time: time.Date(2026, 12, 1, 9, 0, 0, 123, time.FixedZone("CET", 3600))}
	want := `{"kind":"publish","id":"acme-hello","version":"1.2.0","sha256":"` + sha + `","signer":"unsigned","time":"2026-12-01T08:00:00Z"}` + "\n"
	if got := string(translog.RecordText(r)); got != want {
		t.Errorf("RecordText =\n%s want\n%s", got, want)
	}
}

func TestParseRecordRefuses(t *testing.T) {
	good := `{"kind":"publish","id":"a","version":"1.0.0","sha256":"` + sha + `","signer":"unsigned","time":"2026-12-01T08:00:00Z"}`
	for name, text := range map[string]string{
		"no newline":       good,
		"two newlines":     good + "\n\n",
		"spaces":           strings.Replace(good, `"kind":`, `"kind": `, 1) + "\n",
		"field order":      `{"id":"a","kind":"publish","version":"1.0.0","sha256":"` + sha + `","signer":"unsigned","time":"2026-12-01T08:00:00Z"}` + "\n",
		"unknown field":    strings.Replace(good, `{`, `{"extra":1,`, 1) + "\n",
		"bad kind":         strings.Replace(good, `"publish"`, `"Publish!"`, 1) + "\n",
		"bad sha256":       strings.Replace(good, sha, strings.ToUpper(sha), 1) + "\n",
		"publish unsigned": strings.Replace(good, `,"signer":"unsigned"`, ``, 1) + "\n",
		"empty id":         strings.Replace(good, `"id":"a"`, `"id":""`, 1) + "\n",
		"no time":          strings.Replace(good, `,"time":"2026-12-01T08:00:00Z"`, ``, 1) + "\n",
		"local time":       strings.Replace(good, `08:00:00Z`, `09:00:00+01:00`, 1) + "\n",
		"not json":         "publish a 1.0.0\n",
		"too long":         strings.Replace(good, `"id":"a"`, `"id":"`+strings.Repeat("a", translog.MaxRecordText)+`"`, 1) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := translog.ParseRecord([]byte(text)); !errors.Is(err, translog.ErrMalformedRecord) {
				t.Errorf("ParseRecord(%.80q) = %v, want ErrMalformedRecord", text, err)
			}
		})
	}
	if _, err := translog.ParseRecord([]byte(good + "\n")); err != nil {
		t.Errorf("the canonical record was refused: %v", err)
	}
}

func FuzzParseRecord(f *testing.F) {
	f.Add(translog.RecordText(translog.Record{Kind: translog.KindPublish, ID: "a", Version: "1.0.0", SHA256: sha, Signer: "s", Time: at}))
	f.Add([]byte(`{"kind":"yank"}` + "\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		r, err := translog.ParseRecord(text)
		if err != nil {
			return
		}
		if got := translog.RecordText(r); string(got) != string(text) {
			t.Fatalf("accepted a non-canonical record %q (canonical %q)", text, got)
		}
	})
}
