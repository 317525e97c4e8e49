package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"
)

// The scale modes check that a receive costs the same however much is stored: in one
// deep queue (depth), across many queues (queues), and how much memory many waiting long
// polls take (longpolls). Each is bounded by the sizes given.

// scaleOptions are the scale modes' flags.
type scaleOptions struct {
	depths, queueCounts string // comma-separated sizes
	polls               int
	samples             int
}

// runDepth fills a fresh queue to each depth and times receive → delete cycles on it.
func runDepth(ctx context.Context, w, logw io.Writer, o options, so scaleOptions) error {
	sizes, err := intList(so.depths)
	if err != nil {
		return fmt.Errorf("--depths: %w", err)
	}
	fmt.Fprintln(w, "| messages in the queue | fill, messages/s | receive p50 / p99 ms | delete p50 / p99 ms |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	p := newGatewayPath(o.endpoint, o.workers)
	for _, n := range sizes {
		q, err := p.Queue(ctx, "depth-"+uuid.NewString()[:8], false)
		if err != nil {
			return err
		}
		fmt.Fprintf(logw, "depth: filling to %d...\n", n)
		start := time.Now()
		if err := fill(ctx, p, q, n, o.workers, o.bodySize); err != nil {
			return err
		}
		rate := float64(n) / time.Since(start).Seconds()
		rec := newRecorder()
		for i := 0; i < so.samples && ctx.Err() == nil; i++ {
			var hs []string
			if timed(ctx, rec, "receive", func() (err error) { hs, err = p.Receive(ctx, q, 1); return err }) != nil || len(hs) == 0 {
				continue
			}
			timed(ctx, rec, "delete", func() error { return p.Delete(ctx, q, hs) })
		}
		fmt.Fprintf(w, "| %d | %.0f | %s | %s |\n", n, rate, pair(rec.dist("receive")), pair(rec.dist("delete")))
	}
	return ctx.Err()
}

// fill sends n messages to q in batches of 10 from workers goroutines.
func fill(ctx context.Context, p path, q string, n, workers, bodySize int) error {
	body := strings.Repeat("m", bodySize)
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := min(10, left.Add(-10)+10)
				if k <= 0 {
					return
				}
				bodies := make([]string, k)
				for i := range bodies {
					bodies[i] = body
				}
				if err := p.Send(ctx, q, bodies, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// runQueues creates each count of queues with one message each and times send →
// receive → delete cycles on queues picked at random among them.
func runQueues(ctx context.Context, w, logw io.Writer, o options, so scaleOptions) error {
	sizes, err := intList(so.queueCounts)
	if err != nil {
		return fmt.Errorf("--queue-counts: %w", err)
	}
	fmt.Fprintln(w, "| queues | create + first send, queues/s | send p50 / p99 ms | receive p50 / p99 ms | delete p50 / p99 ms |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|")
	p := newGatewayPath(o.endpoint, o.workers)
	var urls []string
	var mu sync.Mutex
	prefix := "many-" + uuid.NewString()[:8] + "-"
	body := []string{strings.Repeat("m", o.bodySize)}
	for _, n := range sizes {
		fmt.Fprintf(logw, "queues: creating up to %d...\n", n)
		start, made := time.Now(), len(urls)
		var next atomic.Int64
		next.Store(int64(len(urls)))
		var wg sync.WaitGroup
		var firstErr atomic.Value
		for range o.workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					i := next.Add(1) - 1
					if i >= int64(n) {
						return
					}
					q, err := p.Queue(ctx, prefix+strconv.FormatInt(i, 10), false)
					if err == nil {
						err = p.Send(ctx, q, body, nil)
					}
					if err != nil {
						firstErr.CompareAndSwap(nil, err)
						return
					}
					mu.Lock()
					urls = append(urls, q)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil {
			return err
		}
		rate := float64(len(urls)-made) / time.Since(start).Seconds()
		rec := newRecorder()
		for i := 0; i < so.samples && ctx.Err() == nil; i++ {
			q := urls[rand.IntN(len(urls))]
			timed(ctx, rec, "send", func() error { return p.Send(ctx, q, body, nil) })
			var hs []string
			if timed(ctx, rec, "receive", func() (err error) { hs, err = p.Receive(ctx, q, 1); return err }) != nil || len(hs) == 0 {
				continue
			}
			timed(ctx, rec, "delete", func() error { return p.Delete(ctx, q, hs) })
		}
		fmt.Fprintf(w, "| %d | %.0f | %s | %s | %s |\n", len(urls), rate, pair(rec.dist("send")), pair(rec.dist("receive")), pair(rec.dist("delete")))
	}
	return ctx.Err()
}

// runLongPolls holds so.polls long polls (20 s waits) on one empty queue at once and
// reports the gateway's resident memory before and while they wait.
func runLongPolls(ctx context.Context, w, logw io.Writer, o options, so scaleOptions) error {
	if o.gatewayPID <= 0 {
		return fmt.Errorf("--mode longpolls needs --gateway-pid to read the gateway's memory")
	}
	p := newGatewayPath(o.endpoint, so.polls)
	q, err := p.Queue(ctx, "polls-"+uuid.NewString()[:8], false)
	if err != nil {
		return err
	}
	before, err := rss(o.gatewayPID)
	if err != nil {
		return err
	}
	var started, failed atomic.Int64
	var wg sync.WaitGroup
	for range so.polls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			if _, err := p.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), WaitTimeSeconds: 20}); err != nil {
				failed.Add(1)
			}
		}()
	}
	// The polls are waiting once the gateway holds them all: give them the time the
	// gateway needs to accept that many connections, well inside their 20 s.
	time.Sleep(8 * time.Second)
	during, err := rss(o.gatewayPID)
	if err != nil {
		return err
	}
	wg.Wait()
	fmt.Fprintf(w, "| long polls | gateway RSS before | while they wait (peak) | failed |\n|---:|---:|---:|---:|\n")
	fmt.Fprintf(w, "| %d | %.1f MiB | %.1f MiB (%.1f MiB) | %d |\n", so.polls, before.rss, during.rss, during.hwm, failed.Load())
	return nil
}

type memory struct{ rss, hwm float64 } // MiB

// rss reads a process's resident set (VmRSS) and its peak (VmHWM) from /proc.
func rss(pid int) (memory, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return memory{}, err
	}
	var m memory
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[0], 64)
		switch k {
		case "VmRSS":
			m.rss = kb / 1024
		case "VmHWM":
			m.hwm = kb / 1024
		}
	}
	return m, nil
}
