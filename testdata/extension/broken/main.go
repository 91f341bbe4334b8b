// Command broken wraps a working extension and breaks it in one way, so that the
// conformance checker's tests can show each failure by name:
//
//	broken -fault NAME -- EXTENSION [ARGS…]
//
// Faults: ndjson (answers as newline-delimited JSON instead of frames), no-values (drops
// the values member of poll results), accept-major (accepts any protocol major by
// rewriting initialize to version 2), stdout-logs (prints log lines on stdout between
// frames), hang-shutdown (never answers shutdown and never exits).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"sync"

	"github.com/pluginyard/registry/extension/rpc"
)

var faults = []string{"ndjson", "no-values", "accept-major", "stdout-logs", "hang-shutdown"}

func main() {
	fault := flag.String("fault", "", "one of ndjson, no-values, accept-major, stdout-logs, hang-shutdown")
	flag.Parse()
	if !slices.Contains(faults, *fault) || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: broken -fault NAME -- EXTENSION [ARGS…]")
		os.Exit(2)
	}
	os.Exit(run(*fault, flag.Args()))
}

// proxy sits between the host (our stdin/stdout) and the wrapped extension.
type proxy struct {
	fault   string
	mu      sync.Mutex
	methods map[string]string // request id → method, to know what a response answers
	out     io.Writer
}

func run(fault string, args []string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	if slices.Contains(args, rpc.PrintManifestFlag) {
		cmd.Stdin, cmd.Stdout = os.Stdin, os.Stdout
		return exitCode(cmd.Run())
	}
	childIn, err := cmd.StdinPipe()
	if err != nil {
		return fail(err)
	}
	childOut, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	p := &proxy{fault: fault, methods: map[string]string{}, out: os.Stdout}
	if fault == "stdout-logs" {
		fmt.Fprintln(os.Stdout, "time=2026-01-01T00:00:00Z level=INFO msg=starting")
	}
	go p.requests(bufio.NewReader(os.Stdin), childIn)
	p.responses(bufio.NewReader(childOut))
	return exitCode(cmd.Wait())
}

// requests forwards the host's frames to the extension, applying request-side faults.
func (p *proxy) requests(in *bufio.Reader, child io.WriteCloser) {
	defer child.Close()
	for {
		// No cap here: an oversized frame goes through so that the extension refuses it.
		body, err := rpc.ReadFrame(in, math.MaxInt)
		if err != nil {
			return
		}
		var req rpc.Request
		if json.Unmarshal(body, &req) == nil {
			body = p.request(req, body)
			if body == nil {
				select {} // hang-shutdown: never answer, never exit
			}
		}
		if rpc.WriteFrame(child, body) != nil {
			return
		}
	}
}

func (p *proxy) request(req rpc.Request, body []byte) []byte {
	p.mu.Lock()
	p.methods[fmt.Sprint(req.ID)] = req.Method
	p.mu.Unlock()
	switch {
	case p.fault == "hang-shutdown" && req.Method == rpc.MethodShutdown:
		return nil
	case p.fault == "accept-major" && req.Method == rpc.MethodInitialize:
		req.Params = json.RawMessage(`{"protocol_version":2}`)
		out, _ := json.Marshal(req)
		return out
	}
	return body
}

// responses forwards the extension's frames to the host, applying response-side faults.
func (p *proxy) responses(in *bufio.Reader) {
	for {
		body, err := rpc.ReadFrame(in, rpc.DefaultMaxFrame)
		if err != nil {
			return
		}
		body = p.response(body)
		if p.fault == "ndjson" {
			_, err = fmt.Fprintf(p.out, "%s\n", body)
		} else {
			err = rpc.WriteFrame(p.out, body)
		}
		if err != nil {
			return
		}
		if p.fault == "stdout-logs" {
			fmt.Fprintln(p.out, "time=2026-01-01T00:00:01Z level=INFO msg=answered")
		}
	}
}

func (p *proxy) response(body []byte) []byte {
	if p.fault != "no-values" {
		return body
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   json.RawMessage `json:"error,omitempty"`
	}
	if json.Unmarshal(body, &resp) != nil {
		return body
	}
	p.mu.Lock()
	method := p.methods[string(resp.ID)]
	p.mu.Unlock()
	var result map[string]json.RawMessage
	if method != rpc.MethodPoll || json.Unmarshal(resp.Result, &result) != nil || result == nil {
		return body
	}
	delete(result, "values")
	resp.Result, _ = json.Marshal(result)
	out, _ := json.Marshal(resp)
	return out
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return fail(err)
	}
	return 0
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "broken:", err)
	return 1
}
