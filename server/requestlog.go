package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// requestLog writes the request lines (one per request, logRequests). While Serve runs, a
// request only queues its line and one goroutine hands the queue to the log handler every
// requestLogEvery: the lines leave back to back, so that whatever reads the log (a pipe,
// journald) wakes once for many of them instead of once per request, and a request does
// not wait on the log's write (at 30,000 requests a second that write and the reader's
// wake-up cost more CPU than the rest of the request's Go code). Nothing is dropped: when
// requestLogMax lines are queued, the request that finds the queue full writes it itself,
// and Serve writes what is left before it returns. Outside Serve (a Server used as an
// http.Handler, as in tests), each line is written at once.
type requestLog struct {
	h slog.Handler
	// out is h's destination when it is one: a queue's lines then leave in writes of up
	// to logOutputChunk bytes, not a write each.
	out *LogOutput

	mu      sync.Mutex
	queue   []slog.Record
	running bool
	wake    chan struct{} // a line was queued into an empty queue
}

const (
	// requestLogEvery is how long a queued line waits at most (as nginx's access_log
	// buffer with flush=): a line is in the log a fraction of a second after its request.
	requestLogEvery = 50 * time.Millisecond
	// requestLogMax bounds the queue (about 1 MB of records): past it, requests write the
	// lines themselves, so that a log that cannot keep up slows requests rather than
	// growing memory.
	requestLogMax = 4096
)

func newRequestLog(h slog.Handler, out *LogOutput) *requestLog {
	return &requestLog{h: h, out: out, wake: make(chan struct{}, 1)}
}

// add writes r, or queues it while the flusher runs.
func (l *requestLog) add(r slog.Record) {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		_ = l.h.Handle(context.Background(), r)
		return
	}
	l.queue = append(l.queue, r)
	n := len(l.queue)
	var full []slog.Record
	if n >= requestLogMax {
		full, l.queue = l.queue, nil
	}
	l.mu.Unlock()
	switch {
	case full != nil:
		l.write(full)
	case n == 1:
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// start runs the flusher until the returned stop is called; stop writes every line still
// queued before it returns, and lines after it are written at once again.
func (l *requestLog) start() (stop func()) {
	l.mu.Lock()
	l.running = true
	l.mu.Unlock()
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		l.flushUntil(done)
	}()
	return func() {
		close(done)
		<-exited
		l.mu.Lock()
		l.running = false
		rest := l.queue
		l.queue = nil
		l.mu.Unlock()
		l.write(rest)
	}
}

// flushUntil writes the queue requestLogEvery after its first line, until done.
func (l *requestLog) flushUntil(done <-chan struct{}) {
	t := time.NewTimer(requestLogEvery)
	t.Stop()
	for {
		select {
		case <-done:
			return
		case <-l.wake:
		}
		t.Reset(requestLogEvery)
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		l.flush()
	}
}

func (l *requestLog) flush() {
	l.mu.Lock()
	q := l.queue
	l.queue = nil
	l.mu.Unlock()
	l.write(q)
}

func (l *requestLog) write(q []slog.Record) {
	if len(q) == 0 {
		return
	}
	l.out.batch(func() {
		for _, r := range q {
			_ = l.h.Handle(context.Background(), r)
		}
	})
}

// LogOutput is the destination of the process's log (wrap stderr in one and give it to the
// slog handler and to Config.LogOutput): the request log's queued lines then leave in
// writes of up to logOutputChunk bytes, each ending at a line's end, instead of a write
// each. A line written by anything else meanwhile joins the batch; any other time it goes
// straight through, between two of a batch's writes at most (so it waits for one chunk to
// be taken by a slow reader of the log, a pipe, never for the whole batch).
type LogOutput struct {
	w   io.Writer
	wmu sync.Mutex // one write to w at a time: a line is never cut by another

	mu       sync.Mutex
	batching int // batches running (the request log's flusher, or a request that found its queue full)
	buf      []byte
}

const (
	// logOutputChunk bounds one write of a batch: a pipe's capacity, so that a line logged
	// meanwhile waits for one chunk at most.
	logOutputChunk = 64 << 10
	// logOutputKeep is the largest batch buffer kept for the next batch.
	logOutputKeep = 1 << 20
)

// NewLogOutput writes to w.
func NewLogOutput(w io.Writer) *LogOutput { return &LogOutput{w: w} }

func (o *LogOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	if o.batching > 0 {
		o.buf = append(o.buf, p...)
		o.mu.Unlock()
		return len(p), nil
	}
	o.mu.Unlock()
	o.wmu.Lock()
	defer o.wmu.Unlock()
	return o.w.Write(p)
}

// batch runs f, collecting what it writes, and writes that when the last batch running
// ends, even one whose f panicked (else every later line would be collected, never
// written). A nil o just runs f.
func (o *LogOutput) batch(f func()) {
	if o == nil {
		f()
		return
	}
	o.mu.Lock()
	o.batching++
	o.mu.Unlock()
	defer o.endBatch()
	f()
}

// endBatch ends a batch, and writes what was collected when it was the last one running.
func (o *LogOutput) endBatch() {
	o.mu.Lock()
	o.batching--
	var b []byte
	if o.batching == 0 {
		b, o.buf = o.buf, nil
	}
	o.mu.Unlock()
	if len(b) == 0 {
		return
	}
	o.writeChunks(b)
	if cap(b) <= logOutputKeep {
		o.mu.Lock()
		if o.buf == nil {
			o.buf = b[:0]
		}
		o.mu.Unlock()
	}
}

// writeChunks writes b in writes of at most logOutputChunk bytes that end at a line's end
// (a longer line goes whole).
func (o *LogOutput) writeChunks(b []byte) {
	for len(b) > 0 {
		n := len(b)
		if n > logOutputChunk {
			if i := bytes.LastIndexByte(b[:logOutputChunk], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(b, '\n'); i >= 0 {
				n = i + 1
			}
		}
		o.wmu.Lock()
		_, _ = o.w.Write(b[:n])
		o.wmu.Unlock()
		b = b[n:]
	}
}
