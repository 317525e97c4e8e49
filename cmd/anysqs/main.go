// Command anysqs runs the SQS-compatible gateway and its tools.
//
//	anysqs serve  [--config FILE] [--listen HOST:PORT]   run the gateway
//	anysqs report [flags]                                 build compatibility reports
//	anysqs version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	_ "github.com/anysqs/anysqs/drivers/cosmos"     // registers "cosmos"
	_ "github.com/anysqs/anysqs/drivers/firestore"  // registers "firestore"
	_ "github.com/anysqs/anysqs/drivers/postgres"   // registers "postgres"
	_ "github.com/anysqs/anysqs/drivers/postgres"   // registers "postgres"
	_ "github.com/anysqs/anysqs/drivers/servicebus" // registers "servicebus"
	_ "github.com/anysqs/anysqs/drivers/spanner"    // registers "spanner"
	_ "github.com/anysqs/anysqs/drivers/sqlite"     // registers "sqlite"
	_ "github.com/anysqs/anysqs/drivers/sqlite"     // registers "sqlite"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/gctune"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "anysqs:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: anysqs serve|report|version [flags]")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "report":
		return runReport(ctx, args[1:], stdout, stderr)
	case "driver":
		return driverCommand(ctx, args[1:], stderr)
	case "version":
		fmt.Fprintln(stdout, "anysqs", version)
		return nil
	default:
		return fmt.Errorf("unknown command %q (want serve, report or version)", args[0])
	}
}

func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgPath := fs.String("config", "", "YAML configuration file (default: embedded backend under ./data)")
	listen := fs.String("listen", "", "HOST:PORT to listen on (overrides the config)")
	pprofAddr := fs.String("pprof", "", "HOST:PORT for Go's /debug/pprof profiles (off by default; keep it on loopback)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath, os.Getenv)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	log := newLogger(cfg.LogLevel, stderr)
	gctune.Apply(os.Getenv)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	drv, err := drivers.Open(ctx, cfg.Backend.Name, cfg.Backend.Options)
	if err != nil {
		return fmt.Errorf("backend %s: %w", cfg.Backend.Name, err)
	}
	defer drv.Close()
	var adm *admin
	var reg prometheus.Registerer // nil: no metrics
	if cfg.AdminListen != "" {
		if adm, err = newAdmin(cfg.Backend.Name); err != nil {
			return err
		}
		reg = adm.reg
	}
	gw, err := gateway.New(ctx, gateway.Config{
		Driver:    drv,
		AccountID: cfg.AccountID,
		Region:    cfg.Region,
		PublicURL: cfg.PublicURL,
		Policy: capabilities.Config{
			Mode: cfg.Policy.Mode, Overrides: cfg.Policy.Overrides, Require: cfg.Policy.Require,
		},
		Logger:      log,
		Metrics:     reg,
		Credentials: cfg.Auth.Secrets(),
	})
	if err != nil {
		return err
	}
	defer gw.Close()
	if adm != nil {
		adm.ready = gw.Ready
		if err := adm.serve(cfg.AdminListen, log); err != nil {
			return err
		}
		defer adm.close()
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	if *pprofAddr != "" {
		if err := servePprof(*pprofAddr, log); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: gw, ReadHeaderTimeout: 10 * time.Second}
	log.Info("anysqs listening", "addr", ln.Addr().String(), "backend", cfg.Backend.Name, "version", version,
		"auth", authMode(cfg))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	log.Info("shutting down")
	if adm != nil {
		adm.draining.Store(true)
	}
	// Closing the gateway first ends its long polls at once, each answering with what it
	// has (nothing), as at the end of its wait: the client polls again, elsewhere. The
	// server's Shutdown would otherwise wait up to 20 s for them. Other calls in flight
	// run to their end: the driver stays open until they have.
	_ = gw.Close()
	return srv.Shutdown(shutCtx)
}

// servePprof exposes the runtime profiles on their own listener, so profiling a
// production gateway never puts /debug paths on the SQS endpoint.
func servePprof(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof listening", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}

func newLogger(level string, w io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level)) // validated by config.Validate
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// authMode says in the start-up log whether requests are authenticated.
func authMode(cfg config.Config) string {
	if n := len(cfg.Auth.Credentials); n > 0 {
		return fmt.Sprintf("sigv4 (%d access keys)", n)
	}
	return "off"
}
