// Command anysqs runs the SQS-compatible gateway and its tools. `anysqs --help` lists
// the commands; each has --help of its own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/capabilities"
	_ "github.com/anysqs/anysqs/drivers/postgres" // registers "postgres"
	_ "github.com/anysqs/anysqs/drivers/sqlite"   // registers "sqlite"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/console"
	"github.com/anysqs/anysqs/internal/declare"
	"github.com/anysqs/anysqs/internal/gctune"
	"github.com/anysqs/anysqs/internal/verify"
)

// commands is the dispatch table: one line per command. (Set in init: help and
// completion read the table themselves.)
var commands []command

func init() {
	commands = []command{
		{"serve", "[--config FILE]", "run the gateway", serve},
		{"mq", "SUBCOMMAND [flags]", "queue chores against a running gateway or AWS SQS", runMQ},
		{"apply", "-f FILE [--dry-run] [flags]", "create and update declared queues on a running gateway or AWS SQS", declare.RunApply},
		{"migrate", "--from FILE --to FILE [flags]", "copy or move queues and messages to another backend", runMigrate},
		{"report", "[flags]", "run the conformance suite and write the compatibility reports", runReport},
		{"verify", "--config FILE | --endpoint URL|aws [flags]", "run the conformance suite against your backend or an SQS endpoint",
			func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
				b := buildInfo()
				return verify.Run(ctx, args, stdout, stderr, verify.Build{Version: b.Version, Commit: b.Commit})
			}},
		{"driver", "serve NAME", "serve a built-in driver as an out-of-process plugin (for backend: plugin)",
			func(ctx context.Context, args []string, _, stderr io.Writer) error {
				return driverCommand(ctx, args, stderr)
			}},
		{"version", "[--short]", "print version, commit and Go version", runVersion},
		{"completion", "bash|zsh|fish", "print a shell completion script", runCompletion},
	}
}

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	if err != nil && !errors.Is(err, cli.ErrHelpShown) {
		fmt.Fprintln(os.Stderr, "anysqs:", err)
	}
	os.Exit(cli.ExitCode(err))
}

// run is main without the process: tests call it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, args, stdout, stderr)
}

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("serve", "[flags]", `Run the gateway: the SQS API on listen, and /metrics, /healthz and /readyz on
admin_listen when the configuration sets it. Without --config: the embedded SQLite
backend with its data in ./data. Relative paths in a configuration file are relative
to that file. Environment variables ANYSQS_* override the file (docs/configuration.md lists them).
SIGINT or SIGTERM drain in-flight requests and stop.`)
	cfgPath := fs.String("config", "", "YAML configuration `FILE` (configs/ has examples)")
	listen := fs.String("listen", "", "`HOST:PORT` of the SQS listener (overrides listen and ANYSQS_LISTEN; without keys, loopback only)")
	pprofAddr := fs.String("pprof", "", "`HOST:PORT` for Go's /debug/pprof profiles (off by default; loopback only)")
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	// --listen is applied, and checked, with the file and the environment: a gateway
	// without keys must refuse a public address however it was given.
	cfg, err := config.Load(*cfgPath, os.Getenv, config.Override{Flag: "--listen", Key: "listen", Value: *listen})
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel, cfg.LogFormat, stderr)
	gctune.Apply(os.Getenv)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Every listener is bound before the backend opens: a start that fails on a busy
	// port must not leave a database (or a lock, or a schema) behind.
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer ln.Close()
	if err := cfg.CheckBound("listen", ln.Addr()); err != nil {
		return err
	}
	var admLn, pprofLn net.Listener
	if cfg.AdminListen != "" {
		if admLn, err = net.Listen("tcp", cfg.AdminListen); err != nil {
			return fmt.Errorf("admin_listen: %w", err)
		}
		defer admLn.Close()
		if err := cfg.CheckBound("admin_listen", admLn.Addr()); err != nil {
			return err
		}
	}
	if ln, err = withTLS(ln, cfg.TLS, "tls", log); err != nil {
		return err
	}
	if admLn != nil {
		if admLn, err = withTLS(admLn, cfg.AdminTLS, "admin_tls", log); err != nil {
			return err
		}
	}
	if *pprofAddr != "" {
		if pprofLn, err = net.Listen("tcp", *pprofAddr); err != nil {
			return fmt.Errorf("pprof: %w", err)
		}
		defer pprofLn.Close()
		// The profiles have no authentication, keys or not: loopback only.
		if tcp, ok := pprofLn.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
			return fmt.Errorf("--pprof %s binds %s: Go's profiles have no authentication, so they are served on loopback only; bind 127.0.0.1 and reach it through an SSH tunnel or kubectl port-forward",
				*pprofAddr, pprofLn.Addr())
		}
	}

	opened, err := openBackends(ctx, cfg)
	if err != nil {
		return err
	}
	defer opened.close()
	var adm *admin
	var reg prometheus.Registerer // nil: no metrics
	if admLn != nil {
		if adm, err = newAdmin(strings.Join(cfg.BackendNames(), ",")); err != nil {
			return err
		}
		reg = adm.reg
	}
	every, _ := cfg.QueueMetrics.Every() // checked by config.Load
	gw, err := gateway.New(ctx, gateway.Config{
		Driver:    opened.driver,
		Backends:  opened.backends,
		Routes:    opened.routes,
		AccountID: cfg.AccountID,
		Region:    cfg.Region,
		PublicURL: cfg.PublicURL,
		Policy: capabilities.Config{
			Mode: cfg.Policy.Mode, Overrides: cfg.Policy.Overrides, Require: cfg.Policy.Require,
		},
		Logger:      log,
		Metrics:     reg,
		Credentials: cfg.Auth.Secrets(),
		Accounts:    cfg.Auth.Accounts(),
		ClientLimits: gateway.ClientLimits{RequestsPerSecond: cfg.Limits.RequestsPerSecond,
			Burst: cfg.Limits.Burst, MaxLongPolls: cfg.Limits.MaxLongPolls},
		MaxInFlight:  cfg.Limits.MaxInFlight,
		QueueMetrics: gateway.QueueMetrics{Interval: every, MaxQueues: cfg.QueueMetrics.MaxQueues},
	})
	if err != nil {
		return err
	}
	defer gw.Close()
	// Declared queues exist before the gateway reports ready or takes a request.
	if err := declareQueues(ctx, gw, cfg, log); err != nil {
		return err
	}
	if adm != nil {
		adm.ready, adm.backends = gw.Ready, gw.Backends
		if cfg.Console {
			adm.console = console.New(gw, gw.Backends(), gw.BackendOf, cfg.Auth.Secrets(), adm.reg, cfg.Region, buildInfo().String())
			log.Info("console enabled", "url", scheme(cfg.AdminTLS)+"://"+admLn.Addr().String()+"/console")
		}
		adm.serve(admLn, log)
		defer adm.close()
	}
	if pprofLn != nil {
		servePprof(pprofLn, log)
	}
	srv := newHTTPServer(gw)
	log.Info("anysqs listening", "addr", ln.Addr().String(), "scheme", scheme(cfg.TLS), "backend", strings.Join(cfg.BackendNames(), ","), "version", buildInfo().Version,
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
func servePprof(ln net.Listener, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	log.Info("pprof listening", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
}

// newLogger returns the process's logger: level and format (text or json) from the
// configuration, which validated both.
func newLogger(level, format string, w io.Writer) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// authMode says in the start-up log whether requests are authenticated.
func authMode(cfg config.Config) string {
	if n := len(cfg.Auth.Credentials); n > 0 {
		return fmt.Sprintf("sigv4 (%d access keys)", n)
	}
	return "off"
}

// The SQS listener's limits on slow and greedy clients. A request must arrive whole within
// readTimeout (headers within readHeaderTimeout); an answer, a 20-second long poll
// included, must be written within writeTimeout; an idle keep-alive connection is closed
// after idleTimeout; headers past maxHeaderBytes are refused with 431.
var (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 60 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 120 * time.Second
	maxHeaderBytes    = 64 << 10
)

func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: idleTimeout, MaxHeaderBytes: maxHeaderBytes}
}
