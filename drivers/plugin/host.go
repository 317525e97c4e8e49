package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/anysqs/anysqs/drivers"
	pb "github.com/anysqs/anysqs/drivers/plugin/internal/driverpb"
)

func init() {
	drivers.Register("plugin", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Options are the backend options of `backend: {name: plugin, options: {...}}`.
type Options struct {
	// Path is the plugin's executable.
	Path string `json:"path"`
	// Args are its arguments (["driver", "serve", "sqlite"] for a built-in driver).
	Args []string `json:"args"`
	// Checksum is "sha256:" and the hex SHA-256 of the executable (sha256sum's output);
	// the binary is checked against it before every start, and does not run if it differs.
	Checksum string `json:"checksum"`
	// Config is the plugin driver's own options, handed to its opener.
	Config map[string]any `json:"config"`

	// Stderr receives the plugin's standard error; nil: the host's.
	Stderr io.Writer `json:"-"`
	// HealthInterval is how often the host checks that an idle plugin process still
	// answers, HealthTimeout how long it waits for the answer before it declares the
	// plugin hung, ends it and starts another. Zero: 1 s and 5 s.
	HealthInterval time.Duration `json:"-"`
	HealthTimeout  time.Duration `json:"-"`
}

const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 10 * time.Second
	// stableAfter is how long a plugin must have run for the next restart to start
	// from minBackoff again, so a plugin that dies soon after every start is restarted
	// ever more slowly.
	stableAfter = time.Minute
)

// Host is the host side: a drivers.Driver whose every method is a call to the plugin
// process, which it starts, watches, and restarts when it crashes or hangs.
type Host struct {
	opts     Options
	name     string
	checksum []byte
	config   []byte
	log      *slog.Logger

	mu      sync.Mutex
	cur     *conn
	down    error         // why cur is nil
	up      chan struct{} // closed while cur is set
	desc    drivers.Description
	started bool

	restarts atomic.Int64
	failed   chan *conn
	done     chan struct{}
	wg       sync.WaitGroup
	closed   atomic.Bool
}

// conn is one running plugin process.
type conn struct {
	client  *goplugin.Client
	rpc     pb.DriverClient
	cc      *grpc.ClientConn
	pid     int
	started time.Time
	desc    drivers.Description
	stop    chan struct{}
	stopped sync.Once
	ended   sync.Once
}

func (c *conn) halt() { c.stopped.Do(func() { close(c.stop) }) }

// Open checks o, starts the plugin, opens its driver with o.Config and describes it:
// the description, checked as an in-tree driver's, is the one the gateway gets.
func Open(ctx context.Context, o Options) (*Host, error) {
	if o.Path == "" {
		return nil, errors.New("plugin: options.path is required: the plugin's executable")
	}
	sum, err := parseChecksum(o.Checksum)
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(o.Config)
	if err != nil {
		return nil, fmt.Errorf("plugin: options.config: %w", err)
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = time.Second
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = 5 * time.Second
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	h := &Host{opts: o, name: filepath.Base(o.Path), checksum: sum, config: cfg,
		log:    slog.Default().With("backend", "plugin", "path", o.Path),
		failed: make(chan *conn, 1), done: make(chan struct{})}
	c, err := h.connect(ctx)
	if err != nil {
		return nil, err
	}
	h.desc, h.started, h.cur = c.desc, true, c
	h.up = make(chan struct{})
	close(h.up)
	h.watch(c)
	h.wg.Add(1)
	go h.supervise()
	return h, nil
}

func parseChecksum(s string) ([]byte, error) {
	hexSum, ok := strings.CutPrefix(s, "sha256:")
	if !ok {
		return nil, fmt.Errorf("plugin: options.checksum %q: want sha256:<hex of the executable's SHA-256> (sha256sum prints it)", s)
	}
	sum, err := hex.DecodeString(hexSum)
	if err != nil || len(sum) != sha256.Size {
		return nil, fmt.Errorf("plugin: options.checksum %q: not a hex SHA-256", s)
	}
	return sum, nil
}

// hostPlugins is what this host speaks, by protocol version.
var hostPlugins = versions(nil)

// connect starts a plugin process and returns it opened and described.
func (h *Host) connect(ctx context.Context) (*conn, error) {
	client := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: hostPlugins,
		Cmd:              exec.Command(h.opts.Path, h.opts.Args...),
		SecureConfig:     &goplugin.SecureConfig{Checksum: h.checksum, Hash: sha256.New()},
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     time.Minute,
		Stderr:           h.opts.Stderr,
		Logger:           hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: h.opts.Stderr}),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessageBytes), grpc.MaxCallSendMsgSize(maxMessageBytes))},
	})
	fail := func(err error) (*conn, error) {
		client.Kill()
		return nil, err
	}
	proto, err := client.Client()
	if err != nil {
		return fail(h.startError(err))
	}
	raw, err := proto.Dispense(pluginName)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: %w", h.opts.Path, err))
	}
	gc := raw.(*grpcClient)
	c := &conn{client: client, rpc: gc.rpc, cc: gc.cc, started: time.Now(), stop: make(chan struct{})}
	if rc := client.ReattachConfig(); rc != nil {
		c.pid = rc.Pid
	}
	if _, err := c.rpc.Open(ctx, &pb.OpenRequest{ConfigJson: h.config}); err != nil {
		return fail(fmt.Errorf("plugin %s: open: %w", h.opts.Path, fromStatus(ctx, h.name, err)))
	}
	d, err := c.rpc.Describe(ctx, empty)
	if err != nil {
		return fail(fmt.Errorf("plugin %s: describe: %w", h.opts.Path, fromStatus(ctx, h.name, err)))
	}
	c.desc = fromDescription(d)
	if err := c.desc.Check(); err != nil {
		return fail(fmt.Errorf("plugin %s: %w", h.opts.Path, err))
	}
	h.mu.Lock()
	first, started := h.desc, h.started
	h.mu.Unlock()
	if started && !sameDriver(first, c.desc) {
		return fail(fmt.Errorf("plugin %s restarted as another driver (%s %s, was %s %s) or with other declarations: restart the gateway to use it",
			h.opts.Path, c.desc.Name, c.desc.Version, first.Name, first.Version))
	}
	return c, nil
}

// sameDriver compares what the gateway built its policy from.
func sameDriver(a, b drivers.Description) bool {
	a.ServiceVersion, b.ServiceVersion, a.Warnings, b.Warnings = "", "", nil, nil
	return reflect.DeepEqual(a.Normalized(), b.Normalized())
}

// startError says why a plugin did not start, in the operator's terms.
func (h *Host) startError(err error) error {
	switch {
	case errors.Is(err, goplugin.ErrChecksumsDoNotMatch):
		got := "unreadable"
		if b, rerr := os.ReadFile(h.opts.Path); rerr == nil {
			s := sha256.Sum256(b)
			got = "sha256:" + hex.EncodeToString(s[:])
		}
		return fmt.Errorf("plugin %s: the executable's checksum is %s, options.checksum says sha256:%s: not running it",
			h.opts.Path, got, hex.EncodeToString(h.checksum))
	case strings.Contains(err.Error(), "Incompatible API version") || strings.Contains(err.Error(), "incompatible API version"):
		return fmt.Errorf("plugin %s speaks another version of the driver plugin protocol than this anysqs (version %d): rebuild the plugin against a matching github.com/anysqs/anysqs/drivers/plugin: %w",
			h.opts.Path, ProtocolVersion, err)
	}
	return fmt.Errorf("plugin %s: start: %w", h.opts.Path, err)
}

// watch checks, every HealthInterval, that c's process is alive and answers gRPC's
// health check within HealthTimeout; a process that exited or hangs is reported.
func (h *Host) watch(c *conn) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		health := healthpb.NewHealthClient(c.cc)
		t := time.NewTicker(h.opts.HealthInterval)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
			}
			if c.client.Exited() {
				h.report(c, errors.New("the plugin process exited"))
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), h.opts.HealthTimeout)
			_, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "plugin"})
			cancel()
			if err != nil {
				select {
				case <-c.stop:
					return
				default:
				}
				h.report(c, fmt.Errorf("the plugin does not answer its health check: %w", err))
				return
			}
		}
	}()
}

// report takes c out of service: calls fail KindUnavailable until a new process is up.
func (h *Host) report(c *conn, why error) {
	h.mu.Lock()
	if h.cur != c {
		h.mu.Unlock()
		return
	}
	h.cur = nil
	h.up = make(chan struct{})
	h.down = fmt.Errorf("plugin %s (pid %d) failed, restarting: %w", h.opts.Path, c.pid, why)
	h.mu.Unlock()
	h.log.Warn("plugin failed; restarting it", "pid", c.pid, "err", why)
	h.failed <- c
}

// end stops c's process at once: its calls have failed already, and a hung process
// would not answer a graceful shutdown.
func (c *conn) end() {
	c.ended.Do(func() {
		c.halt()
		if c.pid > 0 {
			if p, err := os.FindProcess(c.pid); err == nil {
				_ = p.Kill()
			}
		}
		c.client.Kill()
	})
}

// supervise restarts failed plugins, with exponential backoff between attempts.
func (h *Host) supervise() {
	defer h.wg.Done()
	backoff := minBackoff
	for {
		var c *conn
		select {
		case <-h.done:
			return
		case c = <-h.failed:
		}
		c.end()
		if time.Since(c.started) > stableAfter {
			backoff = minBackoff
		}
		for {
			select {
			case <-h.done:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			next, err := h.connect(ctx)
			cancel()
			if err != nil {
				h.mu.Lock()
				h.down = fmt.Errorf("plugin %s is down, restarting: %w", h.opts.Path, err)
				h.mu.Unlock()
				h.log.Warn("plugin restart failed", "err", err, "retry_in", backoff)
				continue
			}
			h.mu.Lock()
			if h.closed.Load() {
				h.mu.Unlock()
				next.end()
				return
			}
			h.cur, h.down = next, nil
			close(h.up)
			h.mu.Unlock()
			h.restarts.Add(1)
			h.log.Info("plugin restarted", "pid", next.pid)
			h.watch(next)
			break
		}
	}
}

// PID is the plugin process's id, 0 while it is down.
func (h *Host) PID() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		return 0
	}
	return h.cur.pid
}

// WaitUp waits until the plugin is up: at once unless it is restarting.
func (h *Host) WaitUp(ctx context.Context) error {
	h.mu.Lock()
	up := h.up
	h.mu.Unlock()
	select {
	case <-up:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Restarts counts the plugin processes started after the first.
func (h *Host) Restarts() int64 { return h.restarts.Load() }

func (h *Host) conn() (*conn, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cur == nil {
		why := h.down
		if why == nil {
			why = errors.New("plugin " + h.opts.Path + " is closed")
		}
		return nil, &drivers.Error{Kind: drivers.KindUnavailable, Message: "plugin " + h.name, Err: why}
	}
	return h.cur, nil
}

// invoke calls f on the current plugin. A broken connection takes the plugin out of
// service; the caller gets KindUnavailable, as the outcome of its call is unknown.
func invoke[T any](h *Host, ctx context.Context, f func(rpc pb.DriverClient) (T, error)) (T, error) {
	c, err := h.conn()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := f(c.rpc)
	if err != nil {
		if ctx.Err() == nil && transportFailure(err) {
			h.report(c, err)
		}
		var zero T
		return zero, fromStatus(ctx, h.name, err)
	}
	return v, nil
}

// Close closes the plugin's driver and ends its process.
func (h *Host) Close() error {
	if h.closed.Swap(true) {
		return nil
	}
	close(h.done)
	h.mu.Lock()
	c := h.cur
	h.cur, h.down = nil, errors.New("plugin "+h.opts.Path+" is closed")
	h.mu.Unlock()
	if c != nil {
		c.halt()
	}
	h.wg.Wait()
	select {
	case failed := <-h.failed: // failed as the host closed: the supervisor never took it
		failed.end()
	default:
	}
	if c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.rpc.Close(ctx, empty)
	c.ended.Do(c.client.Kill)
	return fromStatus(ctx, h.name, err)
}
