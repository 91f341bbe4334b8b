package extension

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/pluginyard/registry/extension/rpc"
)

// errClosed means the extension closed stdout (usually: it exited).
var errClosed = errors.New("the extension closed stdout")

// errNotRun marks a call made after the stream was already unusable.
var errNotRun = errors.New("not run")

// errStream marks a stdout stream that is not made of frames; later calls cannot be judged.
var errStream = errors.New("stdout is not a stream of frames")

// event is what the stdout reader saw: a frame body, a stray line, or the end (err).
type event struct {
	body  []byte
	stray string
	err   error
}

// session is one running extension process spoken to over stdin and stdout.
type session struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  *os.File
	stderr  *tail
	events  chan event
	quit    chan struct{}
	exited  chan struct{}
	waitErr error
	timeout time.Duration

	nextID int64
	frames int
	stray  []string
	broken error // set once the stream is unusable (errStream wrapped, or EOF)
}

func startSession(cfg Config) (*session, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("conformance: stdout pipe: %w", err)
	}
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	setProcessGroup(cmd)
	s := &session{cmd: cmd, stdout: pr, stderr: newTail(cfg.Stderr), events: make(chan event, 64),
		quit: make(chan struct{}), exited: make(chan struct{}), timeout: cfg.Timeout}
	cmd.Stdout, cmd.Stderr, cmd.WaitDelay = pw, s.stderr, time.Second
	if s.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("conformance: stdin pipe: %w", err)
	}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("conformance: start %s: %w", cfg.Command[0], err)
	}
	pw.Close() // the child holds its own copy; EOF comes when it (and its children) close it
	go func() { s.waitErr = cmd.Wait(); close(s.exited) }()
	go s.read(bufio.NewReaderSize(pr, 64<<10), cfg.MaxFrame)
	return s, nil
}

// read turns stdout into events. Lines that are not frames are reported as stray and
// skipped, so that a stray log line does not hide the rest of the session; JSON lines, a
// newline after a frame or a broken frame end the stream as unframed.
func (s *session) read(r *bufio.Reader, max int) {
	for {
		body, err := rpc.ReadFrame(r, max)
		var he *rpc.HeaderError
		switch {
		case err == nil:
			s.emit(event{body: body})
			continue
		case errors.As(err, &he):
			ev, more := classify(r, he)
			s.emit(ev)
			if more {
				continue
			}
		case errors.Is(err, io.EOF):
			s.emit(event{err: io.EOF})
		default:
			s.emit(event{err: fmt.Errorf("%w: %v", errStream, err)})
		}
		return
	}
}

// classify reads the offending line and says whether it is a stray (log) line, after which
// reading goes on, or a framing failure.
func classify(r *bufio.Reader, he *rpc.HeaderError) (event, bool) {
	if len(he.Got) > 0 && (he.Got[0] == '\n' || he.Got[0] == '\r') {
		return event{err: fmt.Errorf("%w: a newline follows a frame; frames are written back to back with no separator", errStream)}, false
	}
	line := readLine(r)
	trimmed := bytes.TrimSpace(line)
	var probe map[string]json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '{' && json.Unmarshal(trimmed, &probe) == nil {
		if _, ok := probe["jsonrpc"]; ok {
			return event{err: fmt.Errorf("%w: found newline-delimited JSON %q; write 8 hex digits of body length, then the body, no newline", errStream, clip(trimmed))}, false
		}
	}
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return event{err: fmt.Errorf("%w: found %q where a frame header (8 hex digits) was expected", errStream, clip(line))}, false
	}
	return event{stray: string(clip(trimmed))}, true
}

// readLine reads up to and including the next newline, keeping at most 64 KiB.
func readLine(r *bufio.Reader) []byte {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(out) < 64<<10 {
			out = append(out, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out
		}
	}
}

func clip(b []byte) []byte {
	if len(b) > 120 {
		return append(append([]byte(nil), b[:120]...), "…"...)
	}
	return b
}

func (s *session) emit(ev event) {
	select {
	case s.events <- ev:
	case <-s.quit:
	}
}

// call sends a request and waits for the response with the same id, collecting stray
// lines on the way. An error means no judgeable response arrived.
func (s *session) call(ctx context.Context, method string, params any) (*rpc.Response, error) {
	if s.broken != nil {
		return nil, fmt.Errorf("%w: %w", errNotRun, s.broken)
	}
	s.nextID++
	req, err := rpc.NewRequest(s.nextID, method, params)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("conformance: encode %s: %w", method, err)
	}
	if err := rpc.WriteFrame(s.stdin, body); err != nil {
		return nil, fmt.Errorf("sending %s failed (did the extension exit?): %w%s", method, err, s.stderr.hint())
	}
	return s.await(ctx, method, s.nextID)
}

// await waits for the response to id, or for any response when id is 0.
func (s *session) await(ctx context.Context, method string, id int64) (*rpc.Response, error) {
	timer := time.NewTimer(s.timeout)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("conformance: %s: %w", method, ctx.Err())
		case <-timer.C:
			return nil, fmt.Errorf("no answer to %s within %s", method, s.timeout)
		case ev := <-s.events:
			resp, done, err := s.take(ev, method, id)
			if done {
				return resp, err
			}
		}
	}
}

func (s *session) take(ev event, method string, id int64) (*rpc.Response, bool, error) {
	switch {
	case ev.stray != "":
		s.stray = append(s.stray, ev.stray)
		return nil, false, nil
	case ev.err != nil:
		if errors.Is(ev.err, io.EOF) {
			s.broken = fmt.Errorf("%w while %s was pending%s", errClosed, method, s.stderr.hint())
		} else {
			s.broken = ev.err
		}
		return nil, true, s.broken
	}
	s.frames++
	resp, err := rpc.ParseResponse(ev.body)
	if err != nil {
		return nil, true, fmt.Errorf("answer to %s: %w", method, err)
	}
	if id != 0 && !resp.IDIs(id) && !resp.IDIsNull() {
		return nil, false, nil // an answer to something else; keep waiting
	}
	return resp, true, nil
}

// waitExit waits up to the timeout for the process to exit by itself.
func (s *session) waitExit(ctx context.Context) (bool, error) {
	select {
	case <-s.exited:
		return true, s.waitErr
	case <-time.After(s.timeout):
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// drain collects stray lines still buffered once the process has exited.
func (s *session) drain() {
	for {
		select {
		case ev := <-s.events:
			if ev.stray != "" {
				s.stray = append(s.stray, ev.stray)
			}
			if ev.err != nil {
				return
			}
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

// close ends the process: stdin is closed, and if it has not exited within a second it is
// killed with its process group.
func (s *session) close() {
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(time.Second):
		killProcess(s.cmd)
		<-s.exited
	}
	close(s.quit)
	s.stdout.Close()
}

// tail keeps the end of the extension's stderr for error messages, passing it all on.
type tail struct {
	mu  sync.Mutex
	buf []byte
	out io.Writer
}

func newTail(out io.Writer) *tail { return &tail{out: out} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = t.buf[len(t.buf)-2048:]
	}
	_, _ = t.out.Write(p)
	return len(p), nil
}

// hint returns "; stderr ends: …" when the extension wrote to stderr.
func (t *tail) hint() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	return "; stderr ends: " + lines[len(lines)-1]
}
