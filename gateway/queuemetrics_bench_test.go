package gateway_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/testbed"
)

// BenchmarkQueueMetricsCollect is one background collection of the per-queue gauges
// over ANYSQS_BENCH_QUEUES queues (default 10,000), each holding one message, on each
// backend of the lite build (the embedded default and the production database): its wall
// time and the gateway process's CPU per collection (cpu-ms/op; for the embedded backend
// that includes the database's work). Requests never wait for a
// collection; this is what it costs in the background.
//
//	go test -run '^$' -bench QueueMetricsCollect -benchtime 5x ./gateway/
func BenchmarkQueueMetricsCollect(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("ANYSQS_BENCH_QUEUES")); err == nil && v > 0 {
		n = v
	}
	for _, backend := range testbed.All {
		if !backend.Lite {
			continue
		}
		b.Run(fmt.Sprintf("%s/queues=%d", backend.Name, n), func(b *testing.B) {
			ctx := context.Background()
			drv, err := backend.Open(ctx, backend.Storage(b))
			if err != nil {
				b.Fatal(err)
			}
			defer drv.Close()
			now := time.Now()
			for i := range n {
				name := fmt.Sprintf("q%05d", i)
				q := drivers.Queue{Name: name, CreatedAt: now, LastModified: now, Attributes: drivers.QueueAttributes{
					VisibilityTimeout: 30, MessageRetentionPeriod: 345600, MaximumMessageSize: 262144}}
				if _, err := drv.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: q}); err != nil {
					b.Fatal(err)
				}
				if _, err := drv.SendMessages(ctx, drivers.SendMessagesRequest{Name: name, Now: now,
					Entries: []drivers.SendEntry{{EntryID: "1", MessageID: fmt.Sprintf("m%d", i), Body: "x"}}}); err != nil {
					b.Fatal(err)
				}
			}
			gw, err := gateway.New(ctx, gateway.Config{Driver: drv, Metrics: prometheus.NewRegistry(),
				QueueMetrics: gateway.QueueMetrics{Interval: 24 * time.Hour}})
			if err != nil {
				b.Fatal(err)
			}
			defer gw.Close()
			if err := gateway.CollectQueueMetrics(gw); err != nil { // warm: connections, caches
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				if err := gateway.CollectQueueMetrics(gw); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e6, "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
