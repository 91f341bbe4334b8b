package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// baseline is the work the issue measures publishes against, on the same package files:
// `sha256sum FILE` then `tar -xzf FILE -C DIR` (a fresh directory per package), from
// workers concurrent workers, until every file or the duration.
func baseline(ctx context.Context, files []string, workDir string, workers int, d time.Duration) (*stats, error) {
	for _, tool := range []string{"sha256sum", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("baseline: %s: %w", tool, err)
		}
	}
	root, err := os.MkdirTemp(workDir, "baseline-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	return run(ctx, workers, len(files), d, func(ctx context.Context, i int) (int64, error) {
		if out, err := exec.CommandContext(ctx, "sha256sum", files[i]).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("sha256sum: %v: %s", err, out)
		}
		dst := filepath.Join(root, strconv.Itoa(i))
		if err := os.Mkdir(dst, 0o755); err != nil {
			return 0, err
		}
		if out, err := exec.CommandContext(ctx, "tar", "-xzf", files[i], "-C", dst).CombinedOutput(); err != nil {
			return 0, fmt.Errorf("tar: %v: %s", err, out)
		}
		return 0, nil
	}), nil
}
