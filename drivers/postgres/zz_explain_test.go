package postgres_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
)

func TestZZExplain(t *testing.T) {
	if os.Getenv("H4_EXPLAIN") == "" {
		t.Skip()
	}
	dsn := newDatabase(t)
	opts := "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=0 -c auto_explain.log_analyze=on"
	d := openDriver(t, dsn+"&options="+strings.ReplaceAll(url.PathEscape(opts), "=", "%3D"))
	createQueue(t, d, "bench.fifo", fifoAttrs())
	for i := 0; i < 500; i++ {
		var es []drivers.SendEntry
		for j := 0; j < 10; j++ {
			n := i*10 + j
			es = append(es, drivers.SendEntry{Body: "x", MessageGroupID: fmt.Sprint(n % 100), MessageDeduplicationID: fmt.Sprint(n)})
		}
		send(t, d, "bench.fifo", time.Now(), es...)
	}
	runWorkers(t, 300, func(ctx context.Context) error { return fifoCycle(ctx, d, 10) })
}
