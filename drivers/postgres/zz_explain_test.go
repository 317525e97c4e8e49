package postgres_test

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
)

func TestZZExplain(t *testing.T) {
	if os.Getenv("H4_EXPLAIN") == "" {
		t.Skip()
	}
	dsn := newDatabase(t)
	opts := "-c session_preload_libraries=auto_explain -c auto_explain.log_min_duration=2 -c auto_explain.log_analyze=on"
	d := openDriver(t, dsn+"&options="+strings.ReplaceAll(url.PathEscape(opts), "=", "%3D"))
	createQueue(t, d, "bench.fifo", fifoAttrs())
	runWorkers(t, 1000, func(ctx context.Context) error { return fifoCycle(ctx, d, 1) })
}
