package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/store"
)

// TestBlocklistCommand: add (twice: the reason is replaced), list (table and JSON), remove,
// and the refusals: a malformed digest or a missing reason (exit 1), an absent entry on
// remove (exit 1), a missing argument (exit 2); every change is audited as the cli.
func TestBlocklistCommand(t *testing.T) {
	dir := mustDemoStore(t)
	ctx := context.Background()
	sha := strings.Repeat("0f", 32)
	run := func(args ...string) (int, string, string) {
		c, out, errOut := testCLI(nil)
		code := cmdBlocklist(ctx, c, append(args, "--data", dir))
		return code, out.String(), errOut.String()
	}
	if code, out, errOut := run("add", strings.ToUpper(sha), "--reason", "leaked build"); code != exitOK || !strings.Contains(out, "blocked "+sha) {
		t.Fatalf("add: %d %q %q", code, out, errOut)
	}
	if code, out, _ := run("add", sha, "--reason", "credential stealer"); code != exitOK || !strings.Contains(out, "replaced the reason") {
		t.Fatalf("second add: %d %q", code, out)
	}
	if code, out, _ := run("list"); code != exitOK || !strings.Contains(out, sha) || !strings.Contains(out, "credential stealer") {
		t.Fatalf("list: %d %q", code, out)
	}
	if code, out, _ := run("list", "--json"); code != exitOK || !strings.Contains(out, `"sha256": "`+sha+`"`) {
		t.Fatalf("list --json: %d %q", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"add", "abc", "--reason", "x"}, exitInvalid, "not 64 hexadecimal digits"},
		{[]string{"add", sha}, exitInvalid, "a reason is required"},
		{[]string{"add"}, exitUsage, "expected one SHA256"},
		{[]string{"remove", strings.Repeat("1", 64)}, exitInvalid, "is not on the blocklist"},
		{[]string{"drop", sha}, exitUsage, "unknown action"},
	} {
		if code, _, errOut := run(c.args...); code != c.code || !strings.Contains(errOut, c.say) {
			t.Errorf("%v: exit %d %q, want %d and %q", c.args, code, errOut, c.code, c.say)
		}
	}
	if code, out, _ := run("remove", sha); code != exitOK || !strings.Contains(out, "unblocked") {
		t.Fatalf("remove: %d %q", code, out)
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	log, _ := st.AuditLog(ctx, 10, 0)
	var got []string
	for _, e := range log {
		if strings.HasPrefix(e.Action, "blocklist.") {
			got = append(got, e.Actor+" "+e.Action)
		}
	}
	if diff := cmp.Diff([]string{"cli blocklist.remove", "cli blocklist.add", "cli blocklist.add"}, got); diff != "" {
		t.Errorf("audit (-want +got):\n%s", diff)
	}
}
