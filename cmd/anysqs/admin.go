package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/console"
)

// admin is the operators' listener (config admin_listen): Prometheus metrics and the
// health checks a load balancer or orchestrator polls. It is apart from the SQS listener
// so that neither its paths nor its traffic mix with the API's.
type admin struct {
	reg      *prometheus.Registry
	ready    func(context.Context) error
	backends func() []gateway.BackendInfo
	draining atomic.Bool // set at shutdown: /readyz fails so balancers stop sending
	srv      *http.Server
	console  *console.Console // nil unless the configuration enables it
}

// newAdmin builds the registry: the Go runtime's and the process's series and the build.
// The gateway registers its series, and the driver's own, on reg when it starts.
func newAdmin(backend string) (*admin, error) {
	a := &admin{reg: prometheus.NewRegistry()}
	b := buildInfo()
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "anysqs_build_info",
		Help:        "Always 1; the labels say which anysqs, built from which commit with which Go, and which backend run.",
		ConstLabels: prometheus.Labels{"version": b.Version, "commit": b.Commit, "goversion": b.Go, "backend": backend}})
	build.Set(1)
	cs := []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), build}
	for _, c := range cs {
		if err := a.reg.Register(c); err != nil {
			return nil, fmt.Errorf("admin metrics: %w", err)
		}
	}
	return a, nil
}

func (a *admin) handler() http.Handler {
	mux := http.NewServeMux()
	if a.console != nil {
		a.console.Register(mux)
	}
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	// What the backend declares, as the driver describes itself: the capability levels
	// the gateway enforces, for operators and for tests of the served binary. A routed
	// gateway lists its backends with their routes; ?backend=NAME shows one.
	mux.HandleFunc("GET /capabilities", func(w http.ResponseWriter, r *http.Request) {
		bs := a.backends()
		var out any
		switch name := r.URL.Query().Get("backend"); {
		case name != "":
			i := slices.IndexFunc(bs, func(b gateway.BackendInfo) bool { return b.Name == name })
			if i < 0 {
				http.Error(w, "no backend "+name, http.StatusNotFound)
				return
			}
			out = bs[i].Description
		case len(bs) == 1:
			out = bs[0].Description
		default:
			type routed struct {
				Name string `json:"name"`
				// Queues are the globs routed to the backend; Default, whether it also
				// takes every queue no glob matches.
				Queues      []string            `json:"queues"`
				Default     bool                `json:"default"`
				Description drivers.Description `json:"description"`
			}
			var list []routed
			for _, b := range bs {
				list = append(list, routed{Name: b.Name, Queues: append([]string{}, b.Queues...), Default: b.Default, Description: b.Description})
			}
			out = map[string]any{"backends": list}
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if a.draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := a.ready(ctx); err != nil {
			http.Error(w, "backend not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// serve serves on ln, bound by the caller before the backend opened.
func (a *admin) serve(ln net.Listener, log *slog.Logger) {
	a.srv = &http.Server{Handler: a.handler(), ReadHeaderTimeout: 10 * time.Second}
	log.Info("admin listening", "addr", ln.Addr().String())
	go func() { _ = a.srv.Serve(ln) }()
}

// close stops the listener once the gateway has finished.
func (a *admin) close() {
	if a.srv != nil {
		_ = a.srv.Close()
	}
}
