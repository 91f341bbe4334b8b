package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readOnlyDir makes dir refuse new entries until the test ends: mode 0555, or, for root
// (whom permission bits do not stop), the immutable attribute. It skips the test when
// neither holds here (root without chattr, or a file system without the attribute).
func readOnlyDir(t *testing.T, dir string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	} else {
		chattr, err := exec.LookPath("chattr")
		if err != nil {
			t.Skip("running as root, where mode 0555 does not stop writes, and no chattr to make the folder immutable")
		}
		if out, err := exec.Command(chattr, "+i", dir).CombinedOutput(); err != nil {
			t.Skipf("running as root, where mode 0555 does not stop writes, and chattr +i %s failed (no CAP_LINUX_IMMUTABLE, or a file system without the attribute): %v %s", dir, err, out)
		}
		t.Cleanup(func() { _ = exec.Command(chattr, "-i", dir).Run() })
	}
	probe := filepath.Join(dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o600); err == nil {
		_ = os.Remove(probe)
		t.Skipf("%s still takes new files after being made read-only", dir)
	}
}

// TestServeRefusesUnwritableBlobs: a blob folder (or its tmp folder) the registry cannot
// write to is refused at the start, naming the setting, the folder, the cause and the fix,
// instead of a ready server whose publishes fail with a bare 500.
func TestServeRefusesUnwritableBlobs(t *testing.T) {
	cases := map[string]struct {
		blobs    func(data string) (flag []string, dir string) // the folder --blobs names
		readOnly string                                        // under that folder
	}{
		"default":     {blobs: defaultBlobsFlag, readOnly: "."},
		"default tmp": {blobs: defaultBlobsFlag, readOnly: "tmp"},
		"file:": {blobs: func(data string) ([]string, string) {
			dir := filepath.Join(filepath.Dir(data), "elsewhere")
			return []string{"--blobs", "file:" + dir}, dir
		}, readOnly: "."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			flags, dir := tc.blobs(data)
			for _, d := range []string{data, filepath.Join(dir, "tmp")} {
				if err := os.MkdirAll(d, 0o750); err != nil {
					t.Fatal(err)
				}
			}
			readOnlyDir(t, filepath.Join(dir, tc.readOnly))
			setting := "--data " + data
			if len(flags) > 0 {
				setting = strings.Join(flags, " ")
			}
			c, _, errOut := testCLI(map[string]string{"REGISTRY_ADMIN_TOKEN": "admin-secret-of-at-least-32-characters"})
			args := append([]string{"--data", data, "--plugins", "../../plugins.yaml", "--addr", freeAddr(t), "--oidc-issuer", "off", "--sync-interval", "0"}, flags...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a start not refused ends here
			defer cancel()
			if code := cmdServe(ctx, c, args); code != exitUsage {
				t.Fatalf("exit = %d, want %d; stderr: %s", code, exitUsage, errOut)
			}
			for _, want := range []string{setting + ": the blob folder " + dir + " is not writable: ", "chown -R USER " + dir} {
				if !strings.Contains(errOut.String(), want) {
					t.Errorf("stderr does not say %q:\n%s", want, errOut)
				}
			}
		})
	}
}

func defaultBlobsFlag(data string) ([]string, string) { return nil, filepath.Join(data, "blobs") }
