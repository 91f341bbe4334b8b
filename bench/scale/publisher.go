package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The continuous publisher of the readers phase runs in a process of its own (this binary
// with -publish-child), as a CI job publishes from another machine: its allocations, GC
// and goroutines are not in the process whose readers are measured. It publishes the
// queue's files given on its stdin, one line each ("index path"), one after another, and
// prints "index nanoseconds bytes error" per publish; it stops when its stdin closes.

// publisher drives the child: publishes next..last-1 of the queue between start and stop,
// its measurements gathered in s.
type publisher struct {
	q          *queue
	url        string
	next, last int
	s          stats
	cmd        *exec.Cmd
	stdin      io.WriteCloser
	done       chan error // when the child has exited: why its run does not count, or nil
}

func (p *publisher) start(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	p.cmd = exec.CommandContext(ctx, self, "-publish-child", p.url)
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		return err
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p.cmd.Stderr = os.Stderr
	if err := p.cmd.Start(); err != nil {
		return err
	}
	p.done = make(chan error, 1)
	go func() {
		// The whole queue is offered: the child publishes until stop closes its stdin.
		w := bufio.NewWriter(p.stdin)
		for k := p.next; k < p.last; k++ {
			fmt.Fprintf(w, "%d %s\n", k, p.q.files[k])
		}
		_ = w.Flush()
	}()
	go func() {
		sc := bufio.NewScanner(out)
		t0 := time.Now()
		for sc.Scan() {
			var k int
			var ns, n int64
			f := strings.SplitN(sc.Text(), " ", 4)
			if len(f) < 4 {
				continue
			}
			k, _ = strconv.Atoi(f[0])
			ns, _ = strconv.ParseInt(f[1], 10, 64)
			n, _ = strconv.ParseInt(f[2], 10, 64)
			var err error
			if f[3] != "" {
				err = fmt.Errorf("%s", f[3])
			}
			p.s.Add(time.Duration(ns), n, err)
			p.next = k + 1
		}
		p.s.Elapsed += time.Since(t0)
		// The child exits 0 when stopped (stop interrupts it): any other end means it
		// stopped publishing before the readers did.
		if err := p.cmd.Wait(); err != nil {
			p.done <- fmt.Errorf("the publisher process failed (its stderr is above): %w", err)
		} else if p.next >= p.last {
			p.done <- fmt.Errorf("the publisher ran out of packages (%d) before the readers stopped: raise -reader-publishes", p.last)
		} else {
			p.done <- nil
		}
	}()
	time.Sleep(200 * time.Millisecond) // the first publish is in flight
	return nil
}

// stop ends the publisher; an error says it was not publishing until then (it failed, or
// it had no packages left), which a measurement "with a publisher" needs.
func (p *publisher) stop() error {
	_ = p.stdin.Close()
	_ = p.cmd.Process.Signal(os.Interrupt)
	return <-p.done
}

// publishChild is the child's main: it publishes the files named on stdin to base until
// stdin closes or it is interrupted, and exits.
func publishChild(ctx context.Context, base string) error {
	c := newClient(1, false)
	defer c.CloseIdleConnections()
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() && ctx.Err() == nil {
		k, path, ok := strings.Cut(in.Text(), " ")
		if !ok {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		s := time.Now()
		status, body, err := postPackage(ctx, c, base, path, data)
		if ctx.Err() != nil {
			break
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		} else if status != 201 {
			msg = fmt.Sprintf("publish: status %d: %.200s", status, strings.ReplaceAll(string(body), "\n", " "))
		}
		fmt.Fprintf(out, "%s %d %d %s\n", k, time.Since(s).Nanoseconds(), len(data), msg)
		_ = out.Flush()
	}
	return nil
}
