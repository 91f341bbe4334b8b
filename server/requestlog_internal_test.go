package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// recordHandler keeps the message and "n" attribute of every record it is handed.
type recordHandler struct {
	mu   sync.Mutex
	seen []int64
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }

func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	r.Attrs(func(a slog.Attr) bool {
		h.seen = append(h.seen, a.Value.Int64())
		return false
	})
	return nil
}

func (h *recordHandler) lines() []int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int64(nil), h.seen...)
}

func numbered(n int) slog.Record {
	r := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.Int("n", n))
	return r
}

func upTo(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// TestRequestLogWritesAtOnceOutsideServe: without a running flusher (a Server used as an
// http.Handler) every line is written before add returns.
func TestRequestLogWritesAtOnceOutsideServe(t *testing.T) {
	h := &recordHandler{}
	l := newRequestLog(h, nil)
	for i := range 3 {
		l.add(numbered(i))
		if got := len(h.lines()); got != i+1 {
			t.Fatalf("after %d adds, %d lines written", i+1, got)
		}
	}
}

// TestRequestLogQueueIsBounded: while the flusher runs, lines queue; the add that fills
// the queue to requestLogMax writes all of them itself, in order, so that a log that cannot
// keep up never grows memory.
func TestRequestLogQueueIsBounded(t *testing.T) {
	h := &recordHandler{}
	l := newRequestLog(h, nil)
	l.running = true // as start does, without a flusher that could write the queue first
	for i := range requestLogMax - 1 {
		l.add(numbered(i))
	}
	if got := len(h.lines()); got != 0 {
		t.Fatalf("%d lines written before the queue was full, want 0 (queued)", got)
	}
	l.add(numbered(requestLogMax - 1))
	if diff := cmp.Diff(upTo(requestLogMax), h.lines()); diff != "" {
		t.Errorf("lines written when the queue filled (-want +got):\n%s", diff)
	}
	if len(l.queue) != 0 {
		t.Errorf("%d lines still queued", len(l.queue))
	}
}

// TestRequestLogStopWritesTheRest: stop writes every queued line, in order, before it
// returns; lines after it are written at once.
func TestRequestLogStopWritesTheRest(t *testing.T) {
	h := &recordHandler{}
	l := newRequestLog(h, nil)
	stop := l.start()
	for i := range 100 {
		l.add(numbered(i))
	}
	stop()
	if diff := cmp.Diff(upTo(100), h.lines()); diff != "" {
		t.Fatalf("lines after stop (-want +got):\n%s", diff)
	}
	l.add(numbered(100))
	if diff := cmp.Diff(upTo(101), h.lines()); diff != "" {
		t.Errorf("a line after stop (-want +got):\n%s", diff)
	}
}

// TestRequestLogFlushesWhileRunning: a queued line is written by the flusher while Serve
// still runs, not only at the end.
func TestRequestLogFlushesWhileRunning(t *testing.T) {
	h := &recordHandler{}
	l := newRequestLog(h, nil)
	stop := l.start()
	defer stop()
	l.add(numbered(0))
	for range 200 { // 10 s at most: a liveness bound, not a timing assertion
		if len(h.lines()) == 1 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("a queued line was never written while the flusher ran")
}

// TestLogOutputWritesAQueueAtOnce: with a LogOutput, a queue of request lines leaves in
// one write, every line in order; a line logged outside a batch goes straight through.
func TestLogOutputWritesAQueueAtOnce(t *testing.T) {
	w := &chunkWriter{}
	out := NewLogOutput(w)
	log := slog.New(slog.NewJSONHandler(out, nil))
	l := newRequestLog(log.Handler(), out)
	l.running = true
	for i := range 50 {
		l.add(numbered(i))
	}
	l.flush()
	if len(w.writes) != 1 || strings.Count(w.String(), "\n") != 50 {
		t.Fatalf("a queue of 50 lines: %d writes, %d lines; want 1 write of 50", len(w.writes), strings.Count(w.String(), "\n"))
	}
	for i, line := range strings.Split(strings.TrimSpace(w.String()), "\n") {
		if !strings.Contains(line, fmt.Sprintf(`"n":%d}`, i)) {
			t.Fatalf("line %d is %s", i, line)
		}
	}
	log.Warn("not a request")
	if len(w.writes) != 2 || !strings.Contains(w.String(), "not a request") {
		t.Errorf("a line outside a batch: %d writes, want 2 (straight through)", len(w.writes))
	}
}

// TestLogOutputWritesBigBatchesInChunks: a batch larger than logOutputChunk leaves in
// writes of at most that many bytes, each ending at a line's end, all lines in order.
func TestLogOutputWritesBigBatchesInChunks(t *testing.T) {
	w := &chunkWriter{}
	out := NewLogOutput(w)
	log := slog.New(slog.NewJSONHandler(out, nil))
	l := newRequestLog(log.Handler(), out)
	l.running = true
	const lines = 2000 // about 150 KB of request lines
	for i := range lines {
		l.add(numbered(i))
	}
	l.flush()
	if len(w.writes) < 2 {
		t.Fatalf("%d bytes left in %d writes; want several of at most %d", w.Len(), len(w.writes), logOutputChunk)
	}
	for i, n := range w.writes {
		if n.size > logOutputChunk || !n.endsLine {
			t.Errorf("write %d: %d bytes, ends a line: %v; want at most %d, ending a line", i, n.size, n.endsLine, logOutputChunk)
		}
	}
	if got := strings.Count(w.String(), "\n"); got != lines {
		t.Errorf("%d lines written, want %d", got, lines)
	}
}

// TestLogOutputWritesALongLineWhole: a line longer than logOutputChunk (a request for a
// path of nearly net/http's 64 KiB header limit, escaped) leaves in one write of its own,
// never cut, between the lines before and after it.
func TestLogOutputWritesALongLineWhole(t *testing.T) {
	w := &chunkWriter{}
	out := NewLogOutput(w)
	log := slog.New(slog.NewJSONHandler(out, nil))
	l := newRequestLog(log.Handler(), out)
	l.running = true
	long := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	long.AddAttrs(slog.String("path", "/"+strings.Repeat("\x00", 60<<10))) // each byte escaped as \u0000
	l.add(numbered(0))
	l.add(long)
	l.add(numbered(2))
	l.flush()
	if len(w.writes) != 3 {
		t.Fatalf("%d writes of sizes %v; want 3: the line before, the long line, the line after", len(w.writes), w.writes)
	}
	lines := strings.SplitAfter(w.String(), "\n")
	for i, n := range w.writes {
		if n.size != len(lines[i]) || !n.endsLine {
			t.Errorf("write %d: %d bytes, ends a line: %v; want line %d whole, %d bytes", i, n.size, n.endsLine, i, len(lines[i]))
		}
	}
	if n := w.writes[1].size; n <= logOutputChunk {
		t.Errorf("the long line is %d bytes, want more than logOutputChunk (%d)", n, logOutputChunk)
	}
}

// TestLogOutputBatchEndsWhenItPanics: a batch whose formatting panics still writes what it
// collected and ends, so that later lines go straight through instead of being collected
// for a batch that never ends.
func TestLogOutputBatchEndsWhenItPanics(t *testing.T) {
	w := &chunkWriter{}
	out := NewLogOutput(w)
	func() {
		defer func() { _ = recover() }()
		out.batch(func() {
			_, _ = out.Write([]byte("collected\n"))
			panic("a handler failed")
		})
	}()
	_, _ = out.Write([]byte("after\n"))
	if got := w.String(); got != "collected\nafter\n" || len(w.writes) != 2 {
		t.Errorf("after a panicking batch the output is %q in %d writes; want the collected line, then the next one straight through", got, len(w.writes))
	}
}

// chunkWriter records the size of each write and whether it ended with a newline.
type chunkWriter struct {
	bytes.Buffer
	writes []struct {
		size     int
		endsLine bool
	}
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, struct {
		size     int
		endsLine bool
	}{len(p), len(p) > 0 && p[len(p)-1] == '\n'})
	return w.Buffer.Write(p)
}

// TestSharedHeaderValuesAreNotWrittenThrough: the header values set on every response
// are shared slices; adding to the same field on one response must not change them.
func TestSharedHeaderValuesAreNotWrittenThrough(t *testing.T) {
	first := http.Header{}
	addVary(first)
	first.Add("Vary", "Cookie")
	setHeader(first, "X-Frame-Options", frameDeny)
	first.Add("X-Frame-Options", "SAMEORIGIN")
	second := http.Header{}
	addVary(second)
	setHeader(second, "X-Frame-Options", frameDeny)
	want := http.Header{"Vary": {"Accept-Encoding"}, "X-Frame-Options": {"DENY"}}
	if diff := cmp.Diff(want, second); diff != "" {
		t.Errorf("a later response's headers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Accept-Encoding", "Cookie"}, first["Vary"]); diff != "" {
		t.Errorf("Vary of the response that added to it (-want +got):\n%s", diff)
	}
}
