package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pluginyard/registry/extension/rpc"
)

// checker carries what one check learns for the next ones.
type checker struct {
	cfg      Config
	report   *ConformanceReport
	results  map[string]Check
	manifest *Manifest
	triggers []string                  // trigger types to exercise
	schemas  map[string]map[string]any // trigger type → schema document
	accepted map[string]bool           // trigger type → trigger/validate accepted its table
	items    map[string][]rpc.Pair     // trigger type → first polled item
	stray    []string                  // non-frame lines seen on stdout, all sessions
	streamOK bool                      // the main session's stdout was a stream of frames
}

func (c *checker) pass(name, format string, args ...any) {
	c.results[name] = Check{Name: name, Passed: true, Detail: fmt.Sprintf(format, args...)}
}

func (c *checker) fail(name, format string, args ...any) {
	c.results[name] = Check{Name: name, Detail: fmt.Sprintf(format, args...)}
}

func (c *checker) skip(name, format string, args ...any) {
	c.results[name] = Check{Name: name, Skipped: true, Detail: fmt.Sprintf(format, args...)}
}

// failErr records a failed call: a stream that is not framed is the framing check's
// failure, so the checks after it are skipped rather than failed twice.
func (c *checker) failErr(name string, err error) {
	if why := notRun(err); why != "" {
		c.skip(name, "%s", why)
		return
	}
	c.fail(name, "%v", err)
}

// notRun explains why a call could not be judged, or returns "" when it could.
func notRun(err error) string {
	switch {
	case errors.Is(err, errStream):
		return "not run: stdout is not a stream of frames (see " + CheckFraming + ")"
	case errors.Is(err, errNotRun) && errors.Is(err, errClosed):
		return "not run: the extension had already closed stdout"
	case errors.Is(err, errNotRun):
		return "not run: " + err.Error()
	}
	return ""
}

// result checks that a call produced a successful response.
func (c *checker) result(name string, resp *rpc.Response, err error) bool {
	if err != nil {
		c.failErr(name, err)
		return false
	}
	if resp.Error != nil {
		c.fail(name, "answered error %d: %s", resp.Error.Code, resp.Error.Message)
		return false
	}
	return true
}

// expectError checks that a call was refused with code.
func (c *checker) expectError(name string, resp *rpc.Response, err error, code int, what string) {
	switch {
	case err != nil:
		c.failErr(name, err)
	case resp.Error == nil:
		c.fail(name, "%s was answered with a result %s; answer error %d", what, clip(resp.Result), code)
	case resp.Error.Code != code:
		c.fail(name, "%s was refused with error %d (%s); the code must be %d", what, resp.Error.Code, resp.Error.Message, code)
	default:
		c.pass(name, "refused with %d: %s", code, resp.Error.Message)
	}
}

func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("result %s does not have the expected shape: %w", clip(raw), err)
	}
	return nil
}

func (c *checker) initialize(ctx context.Context, s *session) {
	resp, err := s.call(ctx, rpc.MethodInitialize, rpc.InitializeParams{ProtocolVersion: rpc.ProtocolVersion})
	if !c.result(CheckInitialize, resp, err) {
		return
	}
	var res rpc.InitializeResult
	if err := decode(resp.Result, &res); err != nil {
		c.fail(CheckInitialize, "%v", err)
		return
	}
	switch {
	case res.ProtocolVersion == nil:
		c.fail(CheckInitialize, "result has no protocol_version; answer {\"protocol_version\": 2, \"name\": …, \"version\": …}")
	case *res.ProtocolVersion != rpc.ProtocolVersion:
		c.fail(CheckInitialize, "answered protocol_version %d to a request for %d; answer with the same major", *res.ProtocolVersion, rpc.ProtocolVersion)
	case c.manifest != nil && (res.Name != c.manifest.Name || res.Version != c.manifest.Version):
		c.fail(CheckInitialize, "answered name %q version %q, the manifest says %q %q", res.Name, res.Version, c.manifest.Name, c.manifest.Version)
	default:
		c.pass(CheckInitialize, "protocol_version %d, %s %s", *res.ProtocolVersion, res.Name, res.Version)
	}
}

func (c *checker) describe(ctx context.Context, s *session) {
	resp, err := s.call(ctx, rpc.MethodDescribe, nil)
	if c.manifest != nil {
		c.triggers = c.manifest.TriggerTypes
	}
	if !c.result(CheckDescribe, resp, err) {
		return
	}
	var res rpc.DescribeResult
	if err := decode(resp.Result, &res); err != nil {
		c.fail(CheckDescribe, "%v", err)
		return
	}
	var got []string
	for _, t := range res.Triggers {
		got = append(got, t.TriggerType)
	}
	if c.manifest == nil {
		c.triggers = got
		c.fail(CheckDescribe, "lists %v, but there is no manifest to compare with (see print-manifest)", got)
		return
	}
	missing, extra := difference(c.manifest.TriggerTypes, got), difference(got, c.manifest.TriggerTypes)
	if len(missing) > 0 || len(extra) > 0 || len(got) != len(c.manifest.TriggerTypes) {
		c.fail(CheckDescribe, "lists %v, the manifest's trigger_types are %v (missing %v, extra %v); list each exactly once", got, c.manifest.TriggerTypes, missing, extra)
		return
	}
	c.pass(CheckDescribe, "lists exactly %s", strings.Join(got, ", "))
}

// difference returns the items of a that are not in b.
func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// perTrigger runs f for every trigger type and records one check: passed when f reported
// no problem for any of them.
func (c *checker) perTrigger(name string, f func(tt string) (ok string, problem error)) {
	if len(c.triggers) == 0 {
		c.fail(name, "no trigger types to exercise (neither the manifest nor describe gave any)")
		return
	}
	var oks, problems []string
	for _, tt := range c.triggers {
		msg, err := f(tt)
		if why := notRun(err); why != "" {
			c.skip(name, "%s", why)
			return
		}
		if err != nil {
			problems = append(problems, tt+": "+err.Error())
			continue
		}
		oks = append(oks, tt+": "+msg)
	}
	if len(problems) > 0 {
		c.fail(name, "%s", strings.Join(problems, "; "))
		return
	}
	c.pass(name, "%s", strings.Join(oks, "; "))
}

// call is s.call with the response's error object turned into an error.
func call(ctx context.Context, s *session, method string, params any) (json.RawMessage, error) {
	resp, err := s.call(ctx, method, params)
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

func (c *checker) schema(ctx context.Context, s *session) {
	c.perTrigger(CheckSchema, func(tt string) (string, error) {
		raw, err := call(ctx, s, rpc.MethodSchema, rpc.TriggerParams{TriggerType: tt})
		if err != nil {
			return "", err
		}
		var res rpc.SchemaResult
		if err := decode(raw, &res); err != nil {
			return "", err
		}
		doc, err := compileSchema(tt, res.Schema)
		if err != nil {
			return "", err
		}
		c.schemas[tt] = doc
		return fmt.Sprintf("schema compiles, prompt_fields %v", res.PromptFields), nil
	})
}

// table returns the automation table for tt: the configured one, or one built from its schema.
func (c *checker) table(tt string) map[string]any {
	if t, ok := c.cfg.Tables[tt]; ok {
		return t
	}
	return sampleTable(c.schemas[tt])
}

func (c *checker) validate(ctx context.Context, s *session) {
	c.perTrigger(CheckValidate, func(tt string) (string, error) {
		table := c.table(tt)
		raw, err := call(ctx, s, rpc.MethodValidate, rpc.TableParams{TriggerType: tt, Table: table})
		var rerr *rpc.Error
		if errors.As(err, &rerr) && rerr.Code == rpc.CodeConfigValidation && rerr.Message != "" {
			return fmt.Sprintf("refused table %s with -32003: %s", compact(table), rerr.Message), nil
		}
		if err != nil {
			return "", fmt.Errorf("%w (want {\"ok\": true} or error -32003)", err)
		}
		var res rpc.ValidateResult
		if err := decode(raw, &res); err != nil {
			return "", err
		}
		if !res.OK {
			return "", fmt.Errorf("answered %s; accept with {\"ok\": true} or refuse with error -32003", clip(raw))
		}
		c.accepted[tt] = true
		return fmt.Sprintf("accepted table %s", compact(table)), nil
	})
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(clip(b))
}

// maxPolls bounds how many items the poll check asks for per trigger type.
const maxPolls = 3

func (c *checker) poll(ctx context.Context, s *session) {
	c.perTrigger(CheckPoll, func(tt string) (string, error) {
		if s.broken != nil {
			return "", fmt.Errorf("%w: %w", errNotRun, s.broken)
		}
		if !c.accepted[tt] {
			return "", fmt.Errorf("trigger/validate did not accept the table %s, so there is nothing to poll; give the checker a table it accepts (registry conformance --table %s='{…}')", compact(c.table(tt)), tt)
		}
		items := 0
		for range maxPolls {
			raw, err := call(ctx, s, rpc.MethodPoll, rpc.TableParams{TriggerType: tt, Table: c.table(tt)})
			if err != nil {
				return "", err
			}
			pairs, found, err := rpc.ParsePoll(raw)
			if err != nil {
				return "", err
			}
			if !found {
				return fmt.Sprintf("%d item(s), then values null", items), nil
			}
			if items == 0 {
				c.items[tt] = pairs
			}
			items++
		}
		return fmt.Sprintf("%d item(s), fields %s", items, keys(c.items[tt])), nil
	})
}

func keys(pairs []rpc.Pair) string {
	var out []string
	for _, p := range pairs {
		out = append(out, p.Key)
	}
	return "[" + strings.Join(out, ", ") + "]"
}

func (c *checker) lifecycle(ctx context.Context, s *session, method, name string) {
	c.perTrigger(name, func(tt string) (string, error) {
		values := c.items[tt]
		if values == nil {
			values = []rpc.Pair{}
		}
		raw, err := call(ctx, s, method, rpc.LifecycleParams{TriggerType: tt, Values: values})
		if err != nil {
			return "", err
		}
		trimmed := strings.TrimSpace(string(raw))
		if trimmed != "null" && !strings.HasPrefix(trimmed, "{") {
			return "", fmt.Errorf("answered %s; answer {} or null", clip(raw))
		}
		return fmt.Sprintf("accepted %d field(s)", len(values)), nil
	})
}

func (c *checker) unknownMethod(ctx context.Context, s *session) {
	resp, err := s.call(ctx, "curupira/conformance-no-such-method", nil)
	c.expectError(CheckUnknownMethod, resp, err, rpc.CodeMethodNotFound, "an unknown method")
}

func (c *checker) unknownTrigger(ctx context.Context, s *session) {
	resp, err := s.call(ctx, rpc.MethodSchema, rpc.TriggerParams{TriggerType: "curupira-conformance-no-such-trigger"})
	c.expectError(CheckUnknownTrigger, resp, err, rpc.CodeInvalidParams, "trigger/schema for an unknown trigger type")
}

func (c *checker) shutdown(ctx context.Context, s *session) {
	resp, err := s.call(ctx, rpc.MethodShutdown, nil)
	if !c.result(CheckShutdown, resp, err) {
		return
	}
	exited, werr := s.waitExit(ctx)
	switch {
	case !exited:
		c.fail(CheckShutdown, "answered shutdown but was still running %s later; exit after answering", c.cfg.Timeout)
	case werr != nil:
		c.fail(CheckShutdown, "exited with %v after shutdown; exit with status 0%s", werr, s.stderr.hint())
	default:
		c.pass(CheckShutdown, "answered %s and exited with status 0", clip(resp.Result))
	}
}
