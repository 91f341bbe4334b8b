// Package deploy_test checks the deployment documentation and the Kubernetes manifest
// against the registry binary: every flag they name exists in its help, every setting of
// serve is documented, and the manifest is what docs/deploy.md says it is. No cluster is
// needed: the manifest is parsed, not applied.
package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// flagHelp is one flag of a command's help: its name and the environment variable its
// usage names ("" when none).
type flagHelp struct {
	name, env string
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
	binDir    string
)

// registryBinary builds cmd/registry once for the test binary.
func registryBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "deploy-test-")
		if buildErr != nil {
			return
		}
		binary = filepath.Join(binDir, "registry")
		out, err := exec.Command("go", "build", "-o", binary, "github.com/pluginyard/registry/cmd/registry").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binary
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "build cmd/registry: " + e.err.Error() + "\n" + e.out }

var (
	flagLine = regexp.MustCompile(`^  --([a-z0-9][a-z0-9-]*)\b`)
	envName  = regexp.MustCompile(`\((REGISTRY_[A-Z0-9_]+)\)`)
)

// helpFlags runs `registry ARGS… -h` and returns its flags by name.
func helpFlags(tb testing.TB, args ...string) map[string]flagHelp {
	tb.Helper()
	out, err := exec.Command(registryBinary(tb), append(args, "-h")...).Output()
	if err != nil {
		tb.Fatalf("registry %s -h: %v", strings.Join(args, " "), err)
	}
	flags := map[string]flagHelp{}
	lines := strings.Split(string(out), "\n")
	for i, line := range lines {
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := flagHelp{name: "--" + m[1]}
		if i+1 < len(lines) {
			if envs := envName.FindAllStringSubmatch(lines[i+1], -1); len(envs) > 0 {
				f.env = envs[len(envs)-1][1]
			}
		}
		flags[f.name] = f
	}
	if len(flags) == 0 {
		tb.Fatalf("registry %s -h lists no flags:\n%s", strings.Join(args, " "), out)
	}
	return flags
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}
