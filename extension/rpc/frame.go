// Package rpc holds the wire format of the Curupira extension protocol (version 2): the
// length-prefixed frames, the JSON-RPC 2.0 envelope, the error codes and the params and
// results of every method. The registry's conformance checker uses it, so the message
// shapes the registry assumes live here and nowhere else.
package rpc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// HeaderLen is the length of a frame header: eight hex digits giving the body length.
const HeaderLen = 8

// DefaultMaxFrame is the protocol's default cap on a frame body (16 MiB).
const DefaultMaxFrame = 16 << 20

// ErrFrameTooLarge is returned when a header announces a body above the reader's cap.
var ErrFrameTooLarge = errors.New("rpc: frame too large")

// HeaderError reports bytes where a frame header was expected. Got holds the bytes
// that were read (up to HeaderLen), so callers can tell newline-delimited JSON or log lines
// apart from a corrupt header.
type HeaderError struct {
	Got []byte
}

// Error implements error.
func (e *HeaderError) Error() string {
	return fmt.Sprintf("rpc: expected %d hex digits of frame length, found %q", HeaderLen, e.Got)
}

// Header renders the eight-hex-digit header for a body of n bytes.
func Header(n int) []byte {
	return fmt.Appendf(nil, "%08x", n)
}

// WriteFrame writes body as one frame: header then body, with no separator.
func WriteFrame(w io.Writer, body []byte) error {
	buf := make([]byte, 0, HeaderLen+len(body))
	buf = append(buf, Header(len(body))...)
	buf = append(buf, body...)
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("rpc: write frame: %w", err)
	}
	return nil
}

// ParseHeader decodes an eight-hex-digit header. Upper- and lower-case digits are accepted.
func ParseHeader(h []byte) (int, error) {
	if len(h) != HeaderLen {
		return 0, &HeaderError{Got: h}
	}
	n := 0
	for _, c := range h {
		d, ok := hexDigit(c)
		if !ok {
			return 0, &HeaderError{Got: h}
		}
		n = n<<4 | d
	}
	return n, nil
}

func hexDigit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// ReadFrame reads one frame from r and returns its body. A header above max returns
// ErrFrameTooLarge without reading the body; bytes that are not a header return a
// *HeaderError and are left unread in r, so the caller can inspect them with Peek.
// io.EOF is returned only when r ends cleanly before a header.
func ReadFrame(r *bufio.Reader, max int) ([]byte, error) {
	h, err := r.Peek(HeaderLen)
	if err != nil {
		if errors.Is(err, io.EOF) && len(h) == 0 {
			return nil, io.EOF
		}
		if errors.Is(err, io.EOF) {
			return nil, &HeaderError{Got: append([]byte(nil), h...)}
		}
		return nil, fmt.Errorf("rpc: read frame header: %w", err)
	}
	n, err := ParseHeader(h)
	if err != nil {
		return nil, &HeaderError{Got: append([]byte(nil), h...)}
	}
	if _, err := r.Discard(HeaderLen); err != nil {
		return nil, fmt.Errorf("rpc: read frame header: %w", err)
	}
	if n > max {
		return nil, fmt.Errorf("%w: header announces %d bytes, the limit is %d", ErrFrameTooLarge, n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("rpc: read frame body of %d bytes: %w", n, err)
	}
	return body, nil
}
