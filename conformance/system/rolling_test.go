package system_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// balancer is the load balancer of a rolling restart: it spreads requests over the
// gateways in rotation, and a gateway is taken out of rotation before it is stopped, as
// a failing /readyz takes it out behind a real one.
type balancer struct {
	mu       sync.Mutex
	backends []*url.URL
	next     atomic.Uint64
	failed   atomic.Int64 // requests answered 502: the gateway failed or died under them
}

func (b *balancer) set(gs ...*gateway) {
	urls := make([]string, len(gs))
	for i, g := range gs {
		urls[i] = g.URL
	}
	b.setURLs(urls...)
}

// setURLs puts the gateways at urls in rotation, in place of the ones before.
func (b *balancer) setURLs(urls ...string) {
	var us []*url.URL
	for _, s := range urls {
		u, _ := url.Parse(s)
		us = append(us, u)
	}
	b.mu.Lock()
	b.backends = us
	b.mu.Unlock()
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	u := b.backends[int(b.next.Add(1))%len(b.backends)]
	b.mu.Unlock()
	// The Host header stays the balancer's, so queue URLs name the balancer.
	// Its error log is off: the proxy errors that matter reach the client as 502s, which
	// the strict senders and consumers record; the rest are consumers cancelled at the end.
	(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(u); pr.Out.Host = pr.In.Host },
		ErrorLog: log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, _ error) {
			if r.Context().Err() == nil { // not a client that gave up
				b.failed.Add(1)
			}
			w.WriteHeader(http.StatusBadGateway)
		}}).ServeHTTP(w, r)
}

// TestRollingRestartUnderLoad restarts two gateways on one PostgreSQL database one after
// the other, each with SIGTERM after it left the balancer's rotation, while senders and
// consumers run through the balancer. No send may fail (strict senders: the SDK's
// default retries only), every acknowledged send must be delivered, and each stopped
// gateway must exit 0.
func TestRollingRestartUnderLoad(t *testing.T) {
	db := newDatabase(t, serverDSN(t))
	a, b := startGateway(t, db), startGateway(t, db)
	lb := &balancer{}
	lb.set(a, b)
	front := httptest.NewServer(lb)
	defer front.Close()
	c := newClient(&gateway{URL: front.URL}, 0)
	std := queueOn(t, "sys-rolling", nil, c)[0]
	fifo := queueOn(t, "sys-rolling.fifo", map[string]string{"FifoQueue": "true"}, c)[0]

	l := newLedger()
	ctx, stopSend := context.WithCancel(context.Background())
	var senders, consumers sync.WaitGroup
	for i := 0; i < 2; i++ {
		senders.Add(2)
		go func() {
			defer senders.Done()
			l.sendStandard(ctx, fixed(c, std), fmt.Sprintf("r%d", i), 1_000_000, true)
		}()
		go func() { defer senders.Done(); l.sendFIFO(ctx, fixed(c, fifo), fmt.Sprintf("rg%d", i), 1_000_000, true) }()
	}
	cctx, stopConsume := context.WithCancel(context.Background())
	for i := 0; i < 2; i++ {
		consumers.Add(2)
		go func() { defer consumers.Done(); l.consume(cctx, i, c, std, crashVT, true) }()
		go func() { defer consumers.Done(); l.consume(cctx, 10+i, c, fifo, crashVT, true) }()
	}
	run := &loadRun{l: l}
	run.waitAcked(t, int64(scale(300)))

	live := []*gateway{a, b}
	for i := range live {
		old := live[i]
		others := append(append([]*gateway{}, live[:i]...), live[i+1:]...)
		lb.set(others...) // out of rotation first; requests already with it run to their end
		if err := old.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-old.done:
		case <-time.After(hangGuard):
			t.Fatalf("gateway %d did not exit after SIGTERM", i)
		}
		if code := old.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("gateway %d exited %d after SIGTERM:\n%s", i, code, old.logs.String())
		}
		live[i] = startGateway(t, db)
		lb.set(live...)
		t.Logf("restarted gateway %d after %d acknowledged sends", i, l.ackedN.Load())
		run.waitAcked(t, int64(scale(300)))
	}
	stopSend()
	senders.Wait()

	dctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	missing := l.waitAllDelivered(dctx, nil)
	stopConsume()
	consumers.Wait()
	l.mu.Lock()
	errs := l.errs
	l.mu.Unlock()
	for _, e := range errs {
		t.Error(e)
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged sends never delivered, e.g. %v", len(missing), l.ackedN.Load(), missing[:min(5, len(missing))])
	}
	t.Logf("%d acknowledged sends over two rolling restarts, none failed, all delivered", l.ackedN.Load())
}
