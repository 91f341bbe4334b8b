package extension

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/pluginyard/registry/extension/rpc"
)

// sessionChecks are recorded by the main session, in the order it runs them.
var sessionChecks = []string{
	CheckFraming, CheckInitialize, CheckDescribe, CheckSchema, CheckValidate, CheckPoll,
	CheckOnStarted, CheckOnFinished, CheckUnknownMethod, CheckUnknownTrigger, CheckShutdown,
}

func (c *checker) printManifest(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	args := append(slices.Clone(c.cfg.Command[1:]), rpc.PrintManifestFlag)
	cmd := exec.CommandContext(ctx, c.cfg.Command[0], args...)
	setProcessGroup(cmd)
	cmd.Cancel = func() error { killProcess(cmd); return nil }
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	stderr := newTail(c.cfg.Stderr)
	cmd.Stdout, cmd.Stderr = &out, stderr
	err := cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		c.fail(CheckPrintManifest, "%s did not exit within %s", rpc.PrintManifestFlag, c.cfg.Timeout)
		return
	case err != nil:
		c.fail(CheckPrintManifest, "%s failed: %v%s", rpc.PrintManifestFlag, err, stderr.hint())
		return
	}
	m, probs := Parse(out.Bytes())
	if m == nil || probs.HasErrors() {
		var msgs []string
		for _, p := range probs.Errors() {
			msgs = append(msgs, p.String())
		}
		c.fail(CheckPrintManifest, "%s printed an invalid manifest: %s", rpc.PrintManifestFlag, strings.Join(msgs, "; "))
		return
	}
	c.manifest, c.report.Manifest = m, m
	detail := fmt.Sprintf("%s %s, trigger types %s", m.Name, m.Version, strings.Join(m.TriggerTypes, ", "))
	if w := probs.Warnings(); len(w) > 0 {
		detail += fmt.Sprintf(" (%d warning(s): %s)", len(w), w[0].Message)
	}
	c.pass(CheckPrintManifest, "%s", detail)
}

func (c *checker) mainSession(ctx context.Context) {
	s, err := startSession(c.cfg)
	if err != nil {
		for _, name := range sessionChecks {
			c.skip(name, "not run: %v", err)
		}
		c.fail(CheckFraming, "%v", err)
		return
	}
	defer s.close()
	c.schemas, c.accepted, c.items = map[string]map[string]any{}, map[string]bool{}, map[string][]rpc.Pair{}
	c.initialize(ctx, s)
	c.describe(ctx, s)
	c.schema(ctx, s)
	c.validate(ctx, s)
	c.poll(ctx, s)
	c.lifecycle(ctx, s, rpc.MethodOnStarted, CheckOnStarted)
	c.lifecycle(ctx, s, rpc.MethodOnFinished, CheckOnFinished)
	c.unknownMethod(ctx, s)
	c.unknownTrigger(ctx, s)
	c.shutdown(ctx, s)
	select {
	case <-s.exited:
		s.drain() // stray lines printed after the last frame
	default:
	}
	c.framing(s)
	c.stray = append(c.stray, s.stray...)
}

// framing judges the whole main session: every byte on stdout was a frame or a stray line.
func (c *checker) framing(s *session) {
	switch {
	case errors.Is(s.broken, errStream):
		c.fail(CheckFraming, "%v", s.broken)
	case s.frames == 0:
		c.fail(CheckFraming, "no frame arrived on stdout (expected 8 hex digits of body length, then the body)")
	default:
		c.streamOK = true
		c.pass(CheckFraming, "%d frames, each 8 hex digits of length then the body, no separator", s.frames)
	}
}

func (c *checker) stdoutFramesOnly() {
	switch {
	case len(c.stray) > 0:
		c.fail(CheckStdoutFramesOnly, "%d line(s) on stdout that are not frames, first %q; write logs to stderr", len(c.stray), c.stray[0])
	case !c.streamOK:
		c.skip(CheckStdoutFramesOnly, "not run: stdout is not a stream of frames (see framing)")
	default:
		c.pass(CheckStdoutFramesOnly, "nothing but frames on stdout")
	}
}

// otherMajor offers protocol version 3 to a fresh process, which must refuse it with -32001.
func (c *checker) otherMajor(ctx context.Context) {
	s, err := startSession(c.cfg)
	if err != nil {
		c.skip(CheckOtherMajor, "not run: %v", err)
		return
	}
	defer s.close()
	other := rpc.ProtocolVersion + 1
	resp, err := s.call(ctx, rpc.MethodInitialize, rpc.InitializeParams{ProtocolVersion: other})
	c.expectError(CheckOtherMajor, resp, err, rpc.CodeProtocolVersion, fmt.Sprintf("initialize with protocol_version %d", other))
	c.stray = append(c.stray, s.stray...)
}

// oversized sends a fresh, initialized process a frame of MaxFrame+1 bytes holding a valid
// describe request. It passes when the extension answers with an error or closes the
// stream; it fails when it answers the request or does neither within the timeout.
func (c *checker) oversized(ctx context.Context) {
	s, err := startSession(c.cfg)
	if err != nil {
		c.skip(CheckOversizedFrame, "not run: %v", err)
		return
	}
	defer s.close()
	if _, err := s.call(ctx, rpc.MethodInitialize, rpc.InitializeParams{ProtocolVersion: rpc.ProtocolVersion}); err != nil {
		c.failErr(CheckOversizedFrame, fmt.Errorf("initialize before the oversized frame: %w", err))
		return
	}
	s.nextID++
	frame := oversizedFrame(s.nextID, c.cfg.MaxFrame+1)
	go func() { _, _ = s.stdin.Write(frame) }() // may block or fail once the extension refuses
	resp, err := s.await(ctx, "an oversized frame", 0)
	c.stray = append(c.stray, s.stray...)
	switch {
	case errors.Is(err, errClosed):
		c.pass(CheckOversizedFrame, "closed the stream on a %d-byte frame", c.cfg.MaxFrame+1)
	case err != nil:
		c.failErr(CheckOversizedFrame, fmt.Errorf("%w; refuse frames above %d bytes with an error response or by closing the stream", err, c.cfg.MaxFrame))
	case resp.Error != nil:
		c.pass(CheckOversizedFrame, "refused a %d-byte frame with %d: %s", c.cfg.MaxFrame+1, resp.Error.Code, resp.Error.Message)
	default:
		c.fail(CheckOversizedFrame, "answered a %d-byte frame (the limit is %d) with a result; refuse frames above the limit", c.cfg.MaxFrame+1, c.cfg.MaxFrame)
	}
}

// oversizedFrame builds a frame whose body is a valid describe request of exactly size bytes.
func oversizedFrame(id int64, size int) []byte {
	head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"describe","params":{"pad":"`, id)
	const tail = `"}}`
	pad := max(size-len(head)-len(tail), 0)
	frame := make([]byte, 0, rpc.HeaderLen+size)
	frame = append(frame, rpc.Header(len(head)+pad+len(tail))...)
	frame = append(frame, head...)
	frame = append(frame, bytes.Repeat([]byte("x"), pad)...)
	return append(frame, tail...)
}
