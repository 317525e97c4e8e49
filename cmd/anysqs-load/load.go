package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// closedConfig is one closed-loop phase.
type closedConfig struct {
	fifo     bool
	batch    int
	workers  int
	groups   int // FIFO message groups
	duration time.Duration
	warmup   time.Duration
	bodySize int
	meter    *cpuMeter // nil: CPU not measured
}

func (c closedConfig) String() string {
	kind := "Standard"
	if c.fifo {
		kind = fmt.Sprintf("FIFO (%d groups)", c.groups)
	}
	return fmt.Sprintf("%s, batch %d", kind, c.batch)
}

// closedResult is what one path achieved in one closed-loop phase.
type closedResult struct {
	path    string
	msgs    int64 // messages sent, received and deleted after the warm-up
	elapsed time.Duration
	rec     *recorder
	cpu     *cpuShare // CPU time of the measured window; nil when not measured
}

func (r closedResult) rate() float64 { return float64(r.msgs) / r.elapsed.Seconds() }

// runClosed runs cfg.workers workers, each repeating send → receive → delete of
// cfg.batch messages on a fresh queue, for the warm-up and then cfg.duration, and counts
// the messages deleted after the warm-up.
func runClosed(ctx context.Context, p path, cfg closedConfig, queueName string) (closedResult, error) {
	q, err := p.Queue(ctx, queueName, cfg.fifo)
	if err != nil {
		return closedResult{}, fmt.Errorf("%s: create queue: %w", p.Name(), err)
	}
	rec := newRecorder()
	body := strings.Repeat("m", cfg.bodySize)
	var counting atomic.Bool
	var msgs, groupSeq atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies := make([]string, cfg.batch)
			for i := range bodies {
				bodies[i] = body
			}
			var groups []string
			if cfg.fifo {
				groups = make([]string, cfg.batch)
			}
			for ctx.Err() == nil {
				for i := range groups {
					groups[i] = fmt.Sprintf("g%d", groupSeq.Add(1)%int64(cfg.groups))
				}
				timed(ctx, rec, "send", func() error { return p.Send(ctx, q, bodies, groups) })
				var hs []string
				timed(ctx, rec, "receive", func() (err error) { hs, err = p.Receive(ctx, q, cfg.batch); return err })
				if len(hs) == 0 {
					continue
				}
				if timed(ctx, rec, "delete", func() error { return p.Delete(ctx, q, hs) }) == nil && counting.Load() {
					msgs.Add(int64(len(hs)))
				}
			}
		}()
	}
	select {
	case <-time.After(cfg.warmup):
	case <-ctx.Done():
	}
	rec.reset()
	var cpu0 cpuSample
	var cpuErr error
	meter := cfg.meter
	if pp, ok := p.(interface{ PID() int }); ok && meter != nil && pp.PID() > 0 {
		// A path with a process of its own (a driver plugin) is metered as a gateway is.
		m := *meter
		m.gatewayPID = pp.PID()
		meter = &m
	}
	if meter != nil {
		cpu0, cpuErr = meter.sample()
	}
	counting.Store(true)
	start := time.Now()
	select {
	case <-time.After(cfg.duration):
	case <-ctx.Done():
	}
	counting.Store(false)
	elapsed := time.Since(start)
	res := closedResult{path: p.Name(), msgs: msgs.Load(), elapsed: elapsed, rec: rec}
	if meter != nil && cpuErr == nil {
		// Before the workers stop: their connections, and so PostgreSQL's backends, are
		// still there to be read.
		if cpu1, err := meter.sample(); err == nil {
			sh := cpu1.since(cpu0)
			res.cpu = &sh
		}
	}
	cancel()
	wg.Wait()
	return res, nil
}

// timed runs call and records its latency under name; errors after ctx ended are not
// counted (they are the phase stopping).
func timed(ctx context.Context, rec *recorder, name string, call func() error) error {
	start := time.Now()
	err := call()
	if err != nil && ctx.Err() != nil {
		return err
	}
	rec.add(name, time.Since(start), err)
	return err
}

// openConfig is one open-loop phase: calls are issued at a fixed rate whatever the
// latency, cycling send, receive, delete (one message each), for warmup unmeasured and
// then until duration or count.
type openConfig struct {
	rate     int
	warmup   time.Duration
	duration time.Duration
	count    int
	bodySize int
	inFlight int
}

// openResult is what one path showed at one rate.
type openResult struct {
	path     string
	issued   int
	skipped  int // calls not issued because inFlight calls were already running
	elapsed  time.Duration
	rec      *recorder
	deferred int // deletes turned into receives because no receipt handle was ready
}

// runOpen preloads a fresh queue and issues calls at cfg.rate. Latency is measured from
// each call's scheduled time, so a stall delays (and is charged to) every call behind it
// instead of being hidden by the generator waiting.
func runOpen(ctx context.Context, p path, cfg openConfig, queueName string) (openResult, error) {
	q, err := p.Queue(ctx, queueName, false)
	if err != nil {
		return openResult{}, fmt.Errorf("%s: create queue: %w", p.Name(), err)
	}
	body := strings.Repeat("m", cfg.bodySize)
	batch := make([]string, 10)
	for i := range batch {
		batch[i] = body
	}
	for i := 0; i < 50; i++ { // 500 messages so receives always find some
		if err := p.Send(ctx, q, batch, nil); err != nil {
			return openResult{}, fmt.Errorf("%s: preload: %w", p.Name(), err)
		}
	}
	res := openResult{path: p.Name(), rec: newRecorder()}
	handles := make(chan string, 100_000)
	sem := make(chan struct{}, cfg.inFlight)
	var deferred atomic.Int64
	var wg sync.WaitGroup
	interval := time.Second / time.Duration(cfg.rate)
	start := time.Now()
	// Calls scheduled before measured are issued alike but not recorded: they take the
	// phase's cold start (new client connections, first writes after the checkpoint).
	measured := start.Add(cfg.warmup)
	end := measured.Add(cfg.duration)
	one := []string{body}
	for i := 0; cfg.count == 0 || res.issued+res.skipped < cfg.count; i++ {
		at := start.Add(time.Duration(i) * interval)
		if !at.Before(end) || ctx.Err() != nil {
			break
		}
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		}
		rec := !at.Before(measured)
		select {
		case sem <- struct{}{}:
		default:
			if rec {
				res.skipped++
			}
			continue
		}
		if rec {
			res.issued++
		}
		wg.Add(1)
		go func(kind int) {
			defer wg.Done()
			defer func() { <-sem }()
			ctx := ctx
			if rec {
				ctx = withHTTPTimes(ctx, res.rec)
			}
			add := func(name string, err error) {
				if rec {
					res.rec.add(name, time.Since(at), err)
				}
			}
			if kind == 2 {
				select {
				case h := <-handles:
					add("delete", p.Delete(ctx, q, []string{h}))
					return
				default:
					if rec {
						deferred.Add(1)
					}
					kind = 1
				}
			}
			if kind == 0 {
				add("send", p.Send(ctx, q, one, nil))
				return
			}
			hs, err := p.Receive(ctx, q, 1)
			add("receive", err)
			for _, h := range hs {
				select {
				case handles <- h:
				default:
				}
			}
		}(i % 3)
	}
	wg.Wait()
	res.elapsed = time.Since(measured)
	res.deferred = int(deferred.Load())
	return res, nil
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat, r.errs, r.firstErr = map[string][]time.Duration{}, map[string]int{}, map[string]string{}
}
