package main

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// runner is the testing.TB the harness of test/replicas (and storetest.StartPostgres,
// s3test.StartS3 under it) is written against, for a program: Fatal and Skip abort the
// set-up being started (abort, recovered by run), Cleanup functions run at close, in
// reverse order, as a test's do. Methods of testing.TB it does not define are not called
// by those harnesses; the embedded nil interface only satisfies testing.TB's private method.
type runner struct {
	testing.TB
	name string
	root string // temporary folders live here; removed at close

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	logf     func(format string, args ...any)
}

// abort is the panic value of Fatal and Skip.
type abort struct {
	msg     string
	skipped bool
}

func newRunner(name string, logf func(string, ...any)) (*runner, error) {
	root, err := os.MkdirTemp("", "bench-replicas-")
	if err != nil {
		return nil, fmt.Errorf("bench: temp dir: %w", err)
	}
	return &runner{name: name, root: root, logf: logf}, nil
}

// close runs the cleanups, newest first, then removes the temporary folders.
func (r *runner) close() {
	r.mu.Lock()
	cs := r.cleanups
	r.cleanups = nil
	r.mu.Unlock()
	for i := len(cs) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if v := recover(); v != nil {
					r.logf("cleanup: %v", v)
				}
			}()
			cs[i]()
		}()
	}
	_ = os.RemoveAll(r.root)
}

func (r *runner) Helper()      {}
func (r *runner) Name() string { return r.name }
func (r *runner) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}

func (r *runner) TempDir() string {
	dir, err := os.MkdirTemp(r.root, "t-")
	if err != nil {
		r.Fatal(err)
	}
	return dir
}

func (r *runner) Failed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

func (r *runner) Log(args ...any)                 { r.logf("%s", fmt.Sprint(args...)) }
func (r *runner) Logf(format string, args ...any) { r.logf(format, args...) }
func (r *runner) Error(args ...any)               { r.fail(); r.logf("error: %s", fmt.Sprint(args...)) }
func (r *runner) Errorf(format string, args ...any) {
	r.fail()
	r.logf("error: "+format, args...)
}
func (r *runner) Fatal(args ...any) { r.fail(); panic(abort{msg: fmt.Sprint(args...)}) }
func (r *runner) Fatalf(format string, args ...any) {
	r.fail()
	panic(abort{msg: fmt.Sprintf(format, args...)})
}
func (r *runner) FailNow()         { r.fail(); panic(abort{msg: "failed"}) }
func (r *runner) Fail()            { r.fail() }
func (r *runner) Skip(args ...any) { panic(abort{msg: fmt.Sprint(args...), skipped: true}) }
func (r *runner) Skipf(format string, a ...any) {
	panic(abort{msg: fmt.Sprintf(format, a...), skipped: true})
}
func (r *runner) SkipNow()                 { panic(abort{msg: "skipped", skipped: true}) }
func (r *runner) Skipped() bool            { return false }
func (r *runner) Setenv(key, value string) { r.Fatalf("bench: Setenv(%s) is not supported", key) }
func (r *runner) Chdir(dir string)         { r.Fatalf("bench: Chdir(%s) is not supported", dir) }
func (r *runner) fail()                    { r.mu.Lock(); r.failed = true; r.mu.Unlock() }
