package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/pluginyard/registry/translog"
)

// benchLog is a log of n publish records, one of them listed.
func benchLog(b *testing.B, n int) *lyingLog {
	f := newLyingLog(b)
	f.publish("acme-listed", "1.0.0", []byte("listed"))
	for i := 1; i < n; i++ {
		sum := sha256.Sum256(fmt.Appendf(nil, "package %d", i))
		f.appendRecord(translog.RecordText(translog.Record{Kind: translog.KindPublish, ID: fmt.Sprintf("acme-p%d", i), Version: "1.0.0",
			SHA256: hex.EncodeToString(sum[:]), Signer: translog.Unsigned, Time: f.now}))
	}
	return f
}

// BenchmarkAuditFull is a first audit (no state): every record is read and checked, so
// its cost grows with the log.
func BenchmarkAuditFull(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchLog(b, n)
			b.ResetTimer()
			for b.Loop() {
				if _, rules, probs := f.audit(nil, false); len(rules) > 0 {
					b.Fatal(probs)
				}
			}
		})
	}
}

// BenchmarkAuditIncremental audits 100 records added since the state's checkpoint: the
// cost stays that of the new records (plus one proof), whatever the log's size.
func BenchmarkAuditIncremental(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			f := benchLog(b, n)
			state, _, _ := f.audit(nil, false)
			for i := range 100 {
				sum := sha256.Sum256(fmt.Appendf(nil, "new %d", i))
				f.appendRecord(translog.RecordText(translog.Record{Kind: translog.KindPublish, ID: fmt.Sprintf("acme-new%d", i), Version: "1.0.0",
					SHA256: hex.EncodeToString(sum[:]), Signer: translog.Unsigned, Time: f.now}))
			}
			b.ResetTimer()
			for b.Loop() {
				st := *state
				st.state.Releases = map[string]loggedRelease{"acme-listed@1.0.0": state.state.Releases["acme-listed@1.0.0"]}
				if _, rules, probs := f.audit(&st, false); len(rules) > 0 {
					b.Fatal(probs)
				}
			}
		})
	}
}
