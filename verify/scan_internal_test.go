package verify

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// writeIn feeds data to a new scanner in pieces of size n and returns the rule ids and
// lines found.
func writeIn(data string, n int) []string {
	s := newScanner()
	for i := 0; i < len(data); i += n {
		s.write([]byte(data[i:min(len(data), i+n)]))
	}
	var out []string
	for _, f := range s.close() {
		out = append(out, fmt.Sprintf("%s@%d", f.rule.id, f.line))
	}
	return out
}

// TestScannerFindsMatchesAcrossWrites: a token cut by a write boundary at any offset is
// still found, at its line, whatever the write sizes (the tar reader's reads vary).
func TestScannerFindsMatchesAcrossWrites(t *testing.T) {
	tok := "gh" + "p_" + "Zq3kV9sLm2Xw8RtYp4Bn7CjHd6Fg1AeU5oIi"
	filler := strings.Repeat("some text\n", 70) // past the 512-byte text decision
	data := filler + "token: " + tok + "\n"
	want := "scan.token.github@71"
	for _, n := range []int{1, 3, 7, 64, 511, 512, 513, len(filler) + 3, len(filler) + 10, len(filler) + 20, 1 << 20} {
		got := writeIn(data, n)
		if len(got) != 1 || got[0] != want {
			t.Errorf("writes of %d bytes: got %v, want [%s]", n, got, want)
		}
	}
}

// TestScannerSeamCountsOnce: a match wholly inside the tail is not found again at the seam.
func TestScannerSeamCountsOnce(t *testing.T) {
	tok := "np" + "m_" + "Zq3kV9sLm2Xw8RtYp4Bn7CjHd6Fg1AeU5oIi"
	data := strings.Repeat("a\n", 300) + tok + "\n" + strings.Repeat("b\n", 300) + tok + "\n"
	for _, n := range []int{100, 700, 1000} {
		if got := writeIn(data, n); len(got) != 1 || got[0] != "scan.token.npm@301" {
			t.Errorf("writes of %d: got %v, want one finding at line 301", n, got)
		}
	}
}

// BenchmarkScanner measures the scanner alone over text without secrets (the common case,
// the keywords' pre-filter only) and over text dense with near misses (every keyword
// present, so every rule's expression runs) at 1, 8 and 64 MiB: cpu-ns/MiB (the thread's
// CPU time, whatever else the machine runs) staying flat shows the cost grows linearly.
func BenchmarkScanner(b *testing.B) {
	rng := rand.New(rand.NewChaCha8([32]byte{9}))
	words := strings.Fields("the plugin reads a task and writes its summary to the board; export const handler = async (event) => { return event.id } // comment")
	var prose strings.Builder
	for prose.Len() < 1<<20 {
		prose.WriteString(words[rng.IntN(len(words))])
		prose.WriteByte(" \n"[rng.IntN(2)])
	}
	dense := strings.Repeat("ghp_xxxx AKIA1234 xoxb-x npm_x glpat-x -----BEGIN CERT pyr_x hooks.slack.com/x secret_access_key=x\n", 1<<20/100)
	for _, c := range []struct {
		name string
		unit string
	}{{"prose", prose.String()}, {"near_misses", dense}} {
		for _, mib := range []int{1, 8, 64} {
			data := []byte(strings.Repeat(c.unit, mib))
			b.Run(fmt.Sprintf("%s/MiB=%d", c.name, mib), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				b.SetBytes(int64(len(data)))
				cpu0, ok := threadCPU()
				for b.Loop() {
					s := newScanner()
					for i := 0; i < len(data); i += copyBufferSize {
						s.write(data[i:min(len(data), i+copyBufferSize)])
					}
					if f := s.close(); len(f) != 0 {
						b.Fatalf("found %v", f)
					}
				}
				if cpu1, _ := threadCPU(); ok {
					b.ReportMetric(float64(cpu1-cpu0)/float64(b.N)/float64(mib), "cpu-ns/MiB")
				}
			})
		}
	}
}

// ruleSet is the sorted rule ids a scan of data written in pieces of n bytes finds.
func ruleSet(data []byte, n int) []string {
	s := newScanner()
	for i := 0; i < len(data); i += n {
		s.write(data[i:min(len(data), i+n)])
	}
	var out []string
	for _, f := range s.close() {
		out = append(out, f.rule.id)
	}
	sort.Strings(out)
	return out
}

// FuzzScannerSplit: what the scanner finds does not depend on how the file's bytes are cut
// into writes (the tar reader's read sizes vary with the archive).
func FuzzScannerSplit(f *testing.F) {
	tok := "gh" + "p_" + "Zq3kV9sLm2Xw8RtYp4Bn7CjHd6Fg1AeU5oIi"
	f.Add([]byte("token: "+tok+"\n"), uint16(3))
	f.Add([]byte(strings.Repeat("x", 600)+"AK"+"IAQWERTYUIOPASDFGHJ2 "+tok), uint16(511))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\n"+strings.Repeat("QUJD", 20)+"\n"), uint16(17))
	f.Fuzz(func(t *testing.T, data []byte, n uint16) {
		if len(data) > 1<<16 {
			return
		}
		whole := ruleSet(data, len(data)+1)
		if got := ruleSet(data, int(n%1024)+1); strings.Join(got, ",") != strings.Join(whole, ",") {
			t.Fatalf("writes of %d bytes found %v, one write found %v", n%1024+1, got, whole)
		}
	})
}
