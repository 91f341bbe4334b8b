package rpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/extension/rpc"
)

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name, in  string
		max       int
		want      []string
		wantErr   error
		wantHead  bool // a *HeaderError ends the stream
		wantShort bool // a body cut short
	}{
		{"one", `0000002c{"jsonrpc":"2.0","id":1,"method":"describe"}`, 100, []string{`{"jsonrpc":"2.0","id":1,"method":"describe"}`}, io.EOF, false, false},
		{"back to back", "00000002{}00000002[]", 100, []string{"{}", "[]"}, io.EOF, false, false},
		{"upper-case hex", "0000000A0123456789", 100, []string{"0123456789"}, io.EOF, false, false},
		{"empty body", "00000000", 100, []string{""}, io.EOF, false, false},
		{"too large", "00000065", 100, nil, rpc.ErrFrameTooLarge, false, false},
		{"newline-delimited", "{\"jsonrpc\":\"2.0\"}\n", 100, nil, nil, true, false},
		{"newline after frame", "00000002{}\n", 100, []string{"{}"}, nil, true, false},
		{"short header", "0000", 100, nil, nil, true, false},
		{"short body", "00000005{}", 100, nil, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tt.in))
			var got []string
			var err error
			for {
				var body []byte
				body, err = rpc.ReadFrame(r, tt.max)
				if err != nil {
					break
				}
				got = append(got, string(body))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("bodies (-want +got):\n%s", diff)
			}
			var he *rpc.HeaderError
			switch {
			case tt.wantHead && !errors.As(err, &he):
				t.Errorf("err = %v, want a HeaderError", err)
			case tt.wantShort && !errors.Is(err, io.ErrUnexpectedEOF):
				t.Errorf("err = %v, want unexpected EOF", err)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestWriteFrameRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	body := []byte(`{"jsonrpc":"2.0","id":1,"result":null}`)
	if err := rpc.WriteFrame(&buf, body); err != nil {
		t.Fatal(err)
	}
	if want := "00000026" + string(body); buf.String() != want {
		t.Fatalf("frame %q, want %q", buf.String(), want)
	}
	got, err := rpc.ReadFrame(bufio.NewReader(&buf), rpc.DefaultMaxFrame)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read back %q, %v", got, err)
	}
}

func TestParsePoll(t *testing.T) {
	tests := []struct {
		result    string
		wantPairs []rpc.Pair
		wantFound bool
		wantErr   string
	}{
		{`{"values": null}`, nil, false, ""},
		{`{"values": []}`, []rpc.Pair{}, true, ""},
		{`{"values": [{"key": "issue_number", "value": "42"}, {"key": "${x}", "value": ""}]}`, []rpc.Pair{{"issue_number", "42"}, {"${x}", ""}}, true, ""},
		{`{}`, nil, false, "no values member"},
		{`{"values": [{"key": "n", "value": 42}]}`, nil, false, "value must be a string"},
		{`{"values": [{"key": "n"}]}`, nil, false, "has no value member"},
		{`{"values": [{"key": "repository", "value": "a/b"}]}`, nil, false, `key "repository" is reserved`},
		{`{"values": [{"key": "automation", "value": "x"}]}`, nil, false, `key "automation" is reserved`},
		{`{"values": {"key": "n", "value": "1"}}`, nil, false, "must be null or an array"},
		{`{"values": ["x"]}`, nil, false, "must be null or an array"},
		{`null`, nil, false, "not an object"},
	}
	for _, tt := range tests {
		pairs, found, err := rpc.ParsePoll(json.RawMessage(tt.result))
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && !strings.Contains(gotErr, tt.wantErr) {
			t.Errorf("%s: err %q, want %q", tt.result, gotErr, tt.wantErr)
		}
		if diff := cmp.Diff(tt.wantPairs, pairs); diff != "" || found != tt.wantFound {
			t.Errorf("%s: found %v (want %v), pairs (-want +got):\n%s", tt.result, found, tt.wantFound, diff)
		}
	}
}

func TestParseResponse(t *testing.T) {
	tests := []struct {
		body    string
		wantErr bool
		nullID  bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":null}`, false, false},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, false, true},
		{`{"jsonrpc":"2.0","id":1}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, true, false},
		{`{"jsonrpc":"1.0","id":1,"result":1}`, true, false},
		{`{"jsonrpc":"2.0","result":1}`, true, false},
		{`{"jsonrpc":"2.0","id":1,"result":1}{}`, true, false},
		{`not json`, true, false},
	}
	for _, tt := range tests {
		resp, err := rpc.ParseResponse([]byte(tt.body))
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: err %v, want error %v", tt.body, err, tt.wantErr)
		}
		if err == nil && resp.IDIsNull() != tt.nullID {
			t.Errorf("%s: IDIsNull %v", tt.body, resp.IDIsNull())
		}
	}
}

// FuzzReadFrame checks that no input panics the reader and that a body never exceeds the cap.
func FuzzReadFrame(f *testing.F) {
	for _, seed := range []string{"00000002{}", "{\"a\":1}\n", "fffffffff", "00000003ab", "0000000z"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for range 16 {
			body, err := rpc.ReadFrame(r, 64)
			if err != nil {
				return
			}
			if len(body) > 64 {
				t.Fatalf("body of %d bytes above the cap", len(body))
			}
		}
	})
}
