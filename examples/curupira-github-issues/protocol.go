package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
)

// maxFrame is the protocol's default frame cap (16 MiB).
const maxFrame = 16 << 20

// JSON-RPC and Curupira error codes this extension answers with.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
	codeVersion        = -32001
	codeConfig         = -32003
)

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return e.Message }

func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// errStop ends the serve loop cleanly (after shutdown).
var errStop = errors.New("shutdown")

// errTooLarge means the host sent a frame above maxFrame; the stream cannot be trusted after it.
var errTooLarge = errors.New("frame too large")

// readFrame reads eight hex digits of body length, then the body.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var head [8]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n, err := strconv.ParseUint(string(head[:]), 16, 32)
	if err != nil {
		return nil, fmt.Errorf("bad frame header %q: %w", head[:], err)
	}
	if n > maxFrame {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", errTooLarge, n, maxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("frame body: %w", err)
	}
	return body, nil
}

func writeFrame(w io.Writer, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%08x%s", len(body), body)
	return err
}

// server answers the host's requests one at a time, in order.
type server struct {
	log      *slog.Logger
	out      io.Writer
	triggers *github
}

func (s *server) serve(in *bufio.Reader) error {
	for {
		body, err := readFrame(in)
		if errors.Is(err, io.EOF) {
			s.log.Info("host closed stdin")
			return nil
		}
		if err != nil {
			// The stream is out of step; say why, then stop.
			code := codeParse
			if errors.Is(err, errTooLarge) {
				code = codeInvalidRequest
			}
			_ = writeFrame(s.out, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(code, "%v", err)})
			return err
		}
		if err := s.handle(body); errors.Is(err, errStop) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func (s *server) handle(body []byte) error {
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return writeFrame(s.out, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeParse, "invalid JSON: %v", err)})
	}
	if len(req.ID) == 0 {
		s.log.Info("notification ignored", "method", req.Method)
		return nil
	}
	result, rerr := s.dispatch(req)
	resp := response{JSONRPC: "2.0", ID: req.ID, Result: result, Error: rerr}
	if rerr == nil && result == nil {
		resp.Result = json.RawMessage("null")
	}
	if err := writeFrame(s.out, resp); err != nil {
		return fmt.Errorf("write response: %w", err)
	}
	if req.Method == "shutdown" {
		return errStop
	}
	return nil
}

func (s *server) dispatch(req request) (any, *rpcError) {
	s.log.Info("request", "method", req.Method)
	switch req.Method {
	case "initialize":
		return s.initialize(req.Params)
	case "describe":
		return map[string]any{"triggers": s.triggers.describe()}, nil
	case "trigger/schema":
		return withTrigger(req.Params, s.triggers.schema)
	case "trigger/validate":
		return withTable(req.Params, s.triggers.validate)
	case "trigger/poll":
		return withTable(req.Params, s.triggers.poll)
	case "trigger/onStarted", "trigger/onFinished":
		return s.lifecycle(req.Method, req.Params)
	case "shutdown":
		return nil, nil
	}
	return nil, errorf(codeMethodNotFound, "method %q not found", req.Method)
}

func (s *server) initialize(params json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion int `json:"protocol_version"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(codeInvalidParams, "initialize params: %v", err)
	}
	if p.ProtocolVersion != 2 {
		return nil, errorf(codeVersion, "protocol version %d is not supported; this extension speaks version 2", p.ProtocolVersion)
	}
	return map[string]any{"protocol_version": 2, "name": extName, "version": extVersion}, nil
}

func (s *server) lifecycle(method string, params json.RawMessage) (any, *rpcError) {
	var p struct {
		TriggerType string `json:"trigger_type"`
		Values      []pair `json:"values"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(codeInvalidParams, "%s params: %v", method, err)
	}
	if !s.triggers.known(p.TriggerType) {
		return nil, errorf(codeInvalidParams, "unknown trigger type %q", p.TriggerType)
	}
	s.log.Info("task event", "method", method, "trigger_type", p.TriggerType, "fields", len(p.Values))
	return struct{}{}, nil
}

type tableParams struct {
	TriggerType string         `json:"trigger_type"`
	Table       map[string]any `json:"table"`
}

func withTrigger(params json.RawMessage, f func(string) (any, *rpcError)) (any, *rpcError) {
	var p tableParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(codeInvalidParams, "params: %v", err)
	}
	return f(p.TriggerType)
}

func withTable(params json.RawMessage, f func(string, map[string]any) (any, *rpcError)) (any, *rpcError) {
	var p tableParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, errorf(codeInvalidParams, "params: %v", err)
	}
	return f(p.TriggerType, p.Table)
}
