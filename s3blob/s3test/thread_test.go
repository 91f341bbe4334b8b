package s3test

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// The server outlives the OS thread that asked for it: Start called from a goroutine
// that locks its thread and returns (which ends that thread, as ingest's low-priority
// publishes do) leaves a server that still answers. A child started on that thread
// would get the parent-death signal with it.
func TestServerOutlivesTheThreadThatStartedIt(t *testing.T) {
	srv := Start(t)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	started := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends when this goroutine does
		started <- srv.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	// The runtime ends the abandoned thread some time later: watch the server for 2 s.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := srv.Client().BucketExists(ctx, srv.Bucket)
		cancel()
		if err != nil {
			t.Fatalf("the server died with the thread that started it: %v\n%s", err, srv.logTail())
		}
	}
}
