package plugin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	_ "github.com/anysqs/anysqs/drivers/postgres"
	_ "github.com/anysqs/anysqs/drivers/sqlite"
)

// The test binary is its own plugin: run as `<test binary> serve-plugin <mode>` (which
// only a Host does), it serves a driver instead of running tests. No build step, and
// the plugin runs exactly the code of package plugin under test.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "host" {
		hostAndWait(os.Args[2])
	}
	if len(os.Args) > 2 && os.Args[1] == "serve-plugin" {
		servePlugin(os.Args[2], os.Args[3:])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func servePlugin(mode string, args []string) {
	switch mode {
	case "sqlite", "postgres":
		plugin.Serve(func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
			return drivers.Open(ctx, mode, raw)
		})
	case "stalling-sqlite":
		plugin.Serve(func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
			d, err := drivers.Open(ctx, "sqlite", raw)
			return stalling{d}, err
		})
	case "probe":
		plugin.Serve(func(context.Context, map[string]any) (drivers.Driver, error) { return &probe{}, nil })
	case "probe-changing": // a plugin that describes itself differently at every start
		plugin.Serve(func(context.Context, map[string]any) (drivers.Driver, error) {
			return &probe{version: strconv.Itoa(os.Getpid())}, nil
		})
	case "probe-v1": // a plugin built against protocol version 1
		plugin.ServeVersion(func(context.Context, map[string]any) (drivers.Driver, error) { return &probe{}, nil }, 1)
	case "marker":
		_ = os.WriteFile(args[0], []byte("ran"), 0o600)
		plugin.Serve(func(context.Context, map[string]any) (drivers.Driver, error) { return &probe{}, nil })
	}
}

// stalling is a driver whose sends of the body "stall" never return (ignoring their
// context): a request that is certainly in flight when the plugin is killed.
type stalling struct{ drivers.Driver }

func (s stalling) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	for _, e := range req.Entries {
		if e.Body == "stall" {
			select {}
		}
	}
	return s.Driver.SendMessages(ctx, req)
}

var self = sync.OnceValues(func() (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", err
	}
	return path, err
})

// options are the backend options that run this test binary as plugin mode.
func options(t testing.TB, mode string, config map[string]any, args ...string) plugin.Options {
	t.Helper()
	path, err := self()
	if err != nil {
		t.Fatal(err)
	}
	return plugin.Options{Path: path, Args: append([]string{"serve-plugin", mode}, args...),
		Checksum: checksum(t, path), Config: config}
}

var sums sync.Map

func checksum(t testing.TB, path string) string {
	if s, ok := sums.Load(path); ok {
		return s.(string)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	s := "sha256:" + hex.EncodeToString(sum[:])
	sums.Store(path, s)
	return s
}

func open(t testing.TB, o plugin.Options) *plugin.Host {
	t.Helper()
	h, err := plugin.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// probe is a driver that answers with what it was sent, and fails as its queue names
// say: "kind-<n>" with that kind, "plain" with a plain error, "block" when the context ends.
type probe struct {
	mu      sync.Mutex
	sent    []drivers.SendEntry
	version string // Description.Version, if set
}

var probeDesc = drivers.Description{Name: "probe", Version: "0.1", ServiceVersion: "none",
	Clock: drivers.ClockGateway, Activity: drivers.ActivityLocal, PollInterval: time.Second,
	Capabilities: []capabilities.Declaration{
		{ID: capabilities.QueueStandard, Level: capabilities.Native, Limits: map[string]string{}},
		{ID: capabilities.QueueTags, Level: capabilities.Degraded, Limits: map[string]string{"max_tags": "5"}, Note: "few"},
	}, Warnings: []string{"a warning"}}

func (p *probe) fail(ctx context.Context, name string) error {
	var k drivers.Kind
	switch {
	case name == "plain":
		return errors.New("plain failure")
	case name == "block":
		<-ctx.Done()
		return ctx.Err()
	case len(name) > 5 && name[:5] == "kind-":
		for k = 0; k.String() != name[5:] && k <= drivers.KindAborted; k++ {
		}
		return &drivers.Error{Kind: k, Message: "probe " + name, Err: errors.New("cause"), RetryAfter: 2 * time.Second}
	}
	return nil
}

func (p *probe) Describe(context.Context) (drivers.Description, error) {
	d := probeDesc
	if p.version != "" {
		d.Version = p.version
	}
	return d, nil
}
func (p *probe) Ping(context.Context) error { return nil }
func (p *probe) Metrics(context.Context) ([]drivers.Metric, error) {
	return []drivers.Metric{{Name: "probe_x", Type: drivers.Gauge, Value: 2, Labels: []drivers.Label{{Name: "a", Value: "b"}}}}, nil
}
func (p *probe) CreateQueue(ctx context.Context, req drivers.CreateQueueRequest) (drivers.CreateQueueResult, error) {
	return drivers.CreateQueueResult{Queue: req.Queue, Existed: true}, p.fail(ctx, req.Queue.Name)
}
func (p *probe) GetQueue(ctx context.Context, req drivers.GetQueueRequest) (drivers.Queue, error) {
	return drivers.Queue{Name: req.Name}, p.fail(ctx, req.Name)
}
func (p *probe) ListQueues(context.Context, drivers.ListQueuesRequest) (drivers.ListQueuesResult, error) {
	return drivers.ListQueuesResult{}, nil
}
func (p *probe) SetQueueAttributes(ctx context.Context, req drivers.SetQueueAttributesRequest) error {
	return p.fail(ctx, req.Name)
}
func (p *probe) UpdateQueueTags(ctx context.Context, req drivers.UpdateQueueTagsRequest) error {
	return p.fail(ctx, req.Name)
}
func (p *probe) DeleteQueue(ctx context.Context, req drivers.DeleteQueueRequest) error {
	return p.fail(ctx, req.Name)
}
func (p *probe) PurgeQueue(ctx context.Context, req drivers.PurgeQueueRequest) error {
	return p.fail(ctx, req.Name)
}
func (p *probe) QueueStats(ctx context.Context, req drivers.QueueStatsRequest) (drivers.QueueStats, error) {
	return drivers.QueueStats{Visible: 1, NotVisible: 2, Delayed: 3}, p.fail(ctx, req.Name)
}
func (p *probe) BrowseMessages(ctx context.Context, req drivers.BrowseMessagesRequest) (drivers.BrowseMessagesResult, error) {
	return drivers.BrowseMessagesResult{}, p.fail(ctx, req.Name)
}
func (p *probe) SendMessages(ctx context.Context, req drivers.SendMessagesRequest) (drivers.SendMessagesResult, error) {
	p.mu.Lock()
	p.sent = append(p.sent, req.Entries...)
	p.mu.Unlock()
	var r drivers.SendMessagesResult
	for _, e := range req.Entries {
		r.Entries = append(r.Entries, drivers.SendEntryResult{EntryID: e.EntryID, MessageID: e.MessageID,
			Err: drivers.Errorf(drivers.KindInvalidArgument, "entry %s", e.EntryID)})
	}
	return r, p.fail(ctx, req.Name)
}

// ReceiveMessages returns the entries sent so far as messages, attributes as sent.
func (p *probe) ReceiveMessages(ctx context.Context, req drivers.ReceiveMessagesRequest) (drivers.ReceiveMessagesResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var r drivers.ReceiveMessagesResult
	for _, e := range p.sent {
		r.Messages = append(r.Messages, drivers.Message{MessageID: e.MessageID, Body: e.Body,
			Attributes: e.Attributes, SystemAttributes: e.SystemAttributes, SentAt: req.Now})
	}
	return r, p.fail(ctx, req.Name)
}
func (p *probe) DeleteMessages(ctx context.Context, req drivers.DeleteMessagesRequest) (drivers.BatchResult, error) {
	return drivers.BatchResult{}, p.fail(ctx, req.Name)
}
func (p *probe) ChangeVisibility(ctx context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	return drivers.BatchResult{}, p.fail(ctx, req.Name)
}
func (p *probe) MoveMessages(ctx context.Context, req drivers.MoveMessagesRequest) (drivers.MoveMessagesResult, error) {
	return drivers.MoveMessagesResult{Moved: req.Limit}, p.fail(ctx, req.Source)
}
func (p *probe) Sweep(context.Context, drivers.SweepRequest) (drivers.SweepResult, error) {
	return drivers.SweepResult{}, nil
}
func (p *probe) AwaitActivity(ctx context.Context, req drivers.AwaitActivityRequest) (drivers.AwaitActivityResult, error) {
	return drivers.AwaitActivityResult{}, drivers.Errorf(drivers.KindUnsupported, "probe: no activity")
}
func (p *probe) WatchActivity(context.Context, drivers.WatchActivityRequest) error {
	return drivers.Errorf(drivers.KindUnsupported, "probe: no activity")
}
func (p *probe) StartMoveTask(context.Context, drivers.MoveTask) error {
	return drivers.Errorf(drivers.KindUnsupported, "probe: no move task store")
}
func (p *probe) ReportMoveTask(context.Context, drivers.ReportMoveTaskRequest) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, drivers.Errorf(drivers.KindUnsupported, "probe: no move task store")
}
func (p *probe) CancelMoveTask(context.Context, string) (drivers.MoveTask, error) {
	return drivers.MoveTask{}, drivers.Errorf(drivers.KindUnsupported, "probe: no move task store")
}
func (p *probe) ListMoveTasks(context.Context, string, int) ([]drivers.MoveTask, error) {
	return nil, drivers.Errorf(drivers.KindUnsupported, "probe: no move task store")
}
func (p *probe) AdoptMoveTasks(context.Context, string, time.Time, time.Time) ([]drivers.MoveTask, error) {
	return nil, drivers.Errorf(drivers.KindUnsupported, "probe: no move task store")
}
func (p *probe) Close() error { return nil }

// hostAndWait is the "host" mode of the test binary: it opens a SQLite plugin, prints its
// pid and waits to be killed.
func hostAndWait(dir string) {
	path, _ := os.Executable()
	b, _ := os.ReadFile(path)
	sum := sha256.Sum256(b)
	h, err := plugin.Open(context.Background(), plugin.Options{Path: path, Args: []string{"serve-plugin", "sqlite"},
		Checksum: "sha256:" + hex.EncodeToString(sum[:]), Config: map[string]any{"data_dir": dir}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(h.PID())
	select {}
}
