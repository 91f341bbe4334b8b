package rpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Version is the JSON-RPC version every message carries.
const Version = "2.0"

// JSON-RPC and Curupira error codes (protocol page, "Error codes").
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeTransportFailure = -32000
	CodeProtocolVersion  = -32001
	CodeCommandFailure   = -32002
	CodeConfigValidation = -32003
	CodeTimeout          = -32004
)

// Request is a JSON-RPC 2.0 request sent by the host.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      int64           `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// NewRequest builds a request; params nil leaves the member out.
func NewRequest(id int64, method string, params any) (*Request, error) {
	req := &Request{JSONRPC: Version, ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("rpc: encode %s params: %w", method, err)
		}
		req.Params = raw
	}
	return req, nil
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// Response is a JSON-RPC 2.0 response. Result keeps the raw bytes so that a JSON null
// result ("null") stays distinct from a missing one (nil).
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// ParseResponse decodes a frame body as a JSON-RPC 2.0 response and checks the envelope:
// the version member, an id, and exactly one of result and error.
func ParseResponse(body []byte) (*Response, error) {
	var resp Response
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&resp); err != nil {
		return nil, fmt.Errorf("rpc: response is not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("rpc: response frame holds more than one JSON value")
	}
	if resp.JSONRPC != Version {
		return nil, fmt.Errorf("rpc: response has jsonrpc %q, want %q", resp.JSONRPC, Version)
	}
	if len(resp.ID) == 0 {
		return nil, errors.New("rpc: response has no id member")
	}
	if (resp.Result == nil) == (resp.Error == nil) {
		return nil, errors.New("rpc: response must have exactly one of result and error")
	}
	return &resp, nil
}

// IDIs reports whether the response's id is the number id.
func (r *Response) IDIs(id int64) bool {
	var n json.Number
	if err := json.Unmarshal(r.ID, &n); err != nil {
		return false
	}
	got, err := n.Int64()
	return err == nil && got == id
}

// IDIsNull reports whether the response's id is JSON null (an error about an unreadable request).
func (r *Response) IDIsNull() bool { return bytes.Equal(bytes.TrimSpace(r.ID), []byte("null")) }
