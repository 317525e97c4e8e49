package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
)

// TestBoundary runs calls through a real plugin process: values, every error kind and
// context errors arrive as the plugin's driver produced them.
func TestBoundary(t *testing.T) {
	t.Parallel()
	h := open(t, options(t, "probe", nil))
	ctx := context.Background()

	desc, err := h.Describe(ctx)
	if err != nil || !reflect.DeepEqual(desc, probeDesc) {
		t.Errorf("Describe = %#v, %v; want %#v", desc, err, probeDesc)
	}

	when := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for _, q := range []drivers.Queue{
		{Name: "zero"},
		{Name: "empty-tags", Tags: map[string]string{}, CreatedAt: when,
			Attributes: drivers.QueueAttributes{RedrivePolicy: &drivers.RedrivePolicy{}}},
		{Name: "tags", Tags: map[string]string{"k": ""}, LastModified: when,
			Attributes: drivers.QueueAttributes{FifoQueue: true, RedrivePolicy: &drivers.RedrivePolicy{DeadLetterQueue: "d", MaxReceiveCount: 2}}},
	} {
		r, err := h.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: q})
		if err != nil || !r.Existed || !reflect.DeepEqual(r.Queue, q) {
			t.Errorf("CreateQueue(%s) = %#v, %v; want the queue as sent", q.Name, r, err)
		}
	}

	entries := []drivers.SendEntry{
		{EntryID: "1", MessageID: "m1", Body: "nil maps"},
		{EntryID: "2", MessageID: "m2", Attributes: map[string]drivers.MessageAttribute{}, SystemAttributes: map[string]drivers.MessageAttribute{}},
		{EntryID: "3", MessageID: "m3", Attributes: map[string]drivers.MessageAttribute{
			"empty": {DataType: "Binary", BinaryValue: []byte{}}, "bin": {DataType: "Binary", BinaryValue: []byte{0, 255}},
			"s": {DataType: "String", StringValue: "x"}}},
	}
	sent, err := h.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Entries: entries})
	if err != nil || len(sent.Entries) != len(entries) {
		t.Fatalf("SendMessages = %#v, %v", sent, err)
	}
	for i, e := range sent.Entries {
		if e.EntryID != entries[i].EntryID || drivers.KindOf(e.Err) != drivers.KindInvalidArgument || e.Err.Message != "entry "+e.EntryID {
			t.Errorf("entry %d result %#v: want its own KindInvalidArgument error", i, e)
		}
	}
	got, err := h.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: when})
	if err != nil || len(got.Messages) != len(entries) || !got.NextVisibleAt.IsZero() {
		t.Fatalf("ReceiveMessages = %#v, %v", got, err)
	}
	for i, m := range got.Messages {
		if !reflect.DeepEqual(m.Attributes, entries[i].Attributes) || !reflect.DeepEqual(m.SystemAttributes, entries[i].SystemAttributes) ||
			!m.SentAt.Equal(when) || !m.FirstReceivedAt.IsZero() {
			t.Errorf("message %d = %#v; want attributes %#v as sent", i, m, entries[i].Attributes)
		}
	}

	for k := drivers.KindUnknown; k <= drivers.KindAborted; k++ {
		_, err := h.GetQueue(ctx, drivers.GetQueueRequest{Name: "kind-" + k.String()})
		var de *drivers.Error
		if !errors.As(err, &de) || de.Kind != k || de.Message != "probe kind-"+k.String() || de.RetryAfter != 2*time.Second ||
			de.Err == nil || de.Err.Error() != "cause" {
			t.Errorf("kind %v: got %#v", k, err)
		}
	}
	if _, err := h.GetQueue(ctx, drivers.GetQueueRequest{Name: "plain"}); err == nil || err.Error() != "plain failure" {
		t.Errorf("plain error: got %v", err)
	}
	if _, err := h.ListMoveTasks(ctx, "q", 1); drivers.KindOf(err) != drivers.KindUnsupported {
		t.Errorf("ListMoveTasks: got %v, want KindUnsupported", err)
	}

	dctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := h.GetQueue(dctx, drivers.GetQueueRequest{Name: "block"}); err != context.DeadlineExceeded {
		t.Errorf("deadline: got %v, want context.DeadlineExceeded", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := h.GetQueue(cctx, drivers.GetQueueRequest{Name: "block"}); err != context.Canceled {
		t.Errorf("cancel: got %v, want context.Canceled", err)
	}

	ms, err := h.Metrics(ctx)
	if err != nil || len(ms) != 3 || ms[0].Name != "probe_x" || ms[0].Labels[0] != (drivers.Label{Name: "a", Value: "b"}) ||
		ms[1].Name != "anysqs_plugin_up" || ms[1].Value != 1 {
		t.Errorf("Metrics = %#v, %v", ms, err)
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := h.Ping(ctx); drivers.KindOf(err) != drivers.KindUnavailable {
		t.Errorf("Ping after Close: %v, want KindUnavailable", err)
	}
}

// TestRefused: a binary whose checksum differs is not run; a plugin of another protocol
// version is refused, saying so.
func TestRefused(t *testing.T) {
	t.Parallel()
	marker := filepath.Join(t.TempDir(), "ran")
	o := options(t, "marker", nil, marker)
	good := o.Checksum
	o.Checksum = "sha256:" + strings.Repeat("ab", 32)
	if _, err := plugin.Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "checksum is "+good) {
		t.Errorf("wrong checksum: got %v, want the refusal naming the binary's checksum", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the binary ran despite its wrong checksum (%v)", err)
	}
	for _, bad := range []string{"", "md5:00", "sha256:zz"} {
		o.Checksum = bad
		if _, err := plugin.Open(context.Background(), o); err == nil || !strings.Contains(err.Error(), "options.checksum") {
			t.Errorf("checksum %q: got %v", bad, err)
		}
	}
	o.Checksum = good
	h := open(t, o)
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("with its checksum the plugin should run: %v", err)
	}
	h.Close()

	_, err := plugin.Open(context.Background(), options(t, "probe-v1", nil))
	if err == nil || !strings.Contains(err.Error(), "another version of the driver plugin protocol") || !strings.Contains(err.Error(), "Plugin version: 1") {
		t.Errorf("version 1 plugin: got %v", err)
	}
}

// TestCrashAndHang: a plugin killed or stopped mid-call fails that call KindUnavailable,
// readiness says so, the host starts another process, and what was acknowledged before
// is still there.
func TestCrashAndHang(t *testing.T) {
	t.Parallel()
	o := options(t, "stalling-sqlite", map[string]any{"data_dir": t.TempDir()})
	o.HealthInterval, o.HealthTimeout = 50*time.Millisecond, 500*time.Millisecond
	h := open(t, o)
	ctx := context.Background()
	now := time.Now()
	if _, err := h.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", CreatedAt: now, LastModified: now,
		Attributes: drivers.QueueAttributes{VisibilityTimeout: 30, MessageRetentionPeriod: 3600, MaximumMessageSize: 1 << 20}}}); err != nil {
		t.Fatal(err)
	}
	send := func(body string) error {
		_, err := h.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now,
			Entries: []drivers.SendEntry{{EntryID: "e", MessageID: body, Body: body}}})
		return err
	}
	for _, tc := range []struct {
		name   string
		signal syscall.Signal
	}{{"killed", syscall.SIGKILL}, {"hung", syscall.SIGSTOP}} {
		if err := send("before-" + tc.name); err != nil {
			t.Fatal(err)
		}
		pid := h.PID()
		stalled := make(chan error)
		go func() { stalled <- send("stall") }()
		// The stalled call is in flight once the plugin is inside it; a stopped or killed
		// process fails it either way, so the signal needs no wait.
		if err := syscall.Kill(pid, tc.signal); err != nil {
			t.Fatal(err)
		}
		if err := <-stalled; drivers.KindOf(err) != drivers.KindUnavailable {
			t.Fatalf("%s: in-flight call got %v, want KindUnavailable", tc.name, err)
		}
		if err := h.Ping(ctx); drivers.KindOf(err) != drivers.KindUnavailable && h.PID() == pid {
			t.Errorf("%s: Ping = %v while the plugin is down, want KindUnavailable", tc.name, err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		if err := h.WaitUp(wctx); err != nil {
			t.Fatalf("%s: the plugin did not come back: %v", tc.name, err)
		}
		cancel()
		if err := h.Ping(ctx); err != nil || h.PID() == pid {
			t.Fatalf("%s: after the restart Ping = %v, pid %d (was %d)", tc.name, err, h.PID(), pid)
		}
	}
	if h.Restarts() != 2 {
		t.Errorf("Restarts = %d, want 2", h.Restarts())
	}
	r, err := h.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 10, VisibilityTimeout: 30})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range r.Messages {
		ids[m.MessageID] = true
	}
	if !ids["before-killed"] || !ids["before-hung"] {
		t.Errorf("after two restarts received %v; want both acknowledged messages", ids)
	}
}

// TestOrphanExits: a plugin whose host was killed (SIGKILL: no chance to end it) exits
// by itself, releasing its storage: another plugin opens the same SQLite data directory.
func TestOrphanExits(t *testing.T) {
	t.Parallel()
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	host := exec.Command(path, "host", dir)
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscan(out, &pid); err != nil || pid <= 0 {
		host.Process.Kill()
		t.Fatalf("host: plugin pid %d, %v", pid, err)
	}
	host.Process.Kill()
	host.Wait()
	// Polling is the only way to see another process's end that is not our child.
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin %d outlived its killed host by 30 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h := open(t, options(t, "sqlite", map[string]any{"data_dir": dir}))
	if err := h.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// alive: pid is a process that has not exited (a zombie nobody reaped has).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	i := strings.LastIndexByte(string(b), ')')
	return i < 0 || i+2 >= len(b) || b[i+2] != 'Z'
}

// TestRestartAsAnotherDriver: a restarted plugin that describes itself otherwise than
// the first is refused, since the gateway's policy was built from the first; the
// backend stays unavailable, saying why.
func TestRestartAsAnotherDriver(t *testing.T) {
	t.Parallel()
	o := options(t, "probe-changing", nil)
	o.HealthInterval = 50 * time.Millisecond
	h := open(t, o)
	ctx := context.Background()
	first, _ := h.Describe(ctx)
	if err := syscall.Kill(h.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// No event says a restart was refused; the host's answer is polled.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := h.Ping(ctx)
		if drivers.KindOf(err) == drivers.KindUnavailable && strings.Contains(err.Error(), "restarted as another driver") {
			break
		}
		if err == nil && h.Restarts() > 0 {
			t.Fatal("a plugin describing itself otherwise was accepted")
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s Ping = %v, want the refusal", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if d, _ := h.Describe(ctx); !reflect.DeepEqual(d, first) {
		t.Errorf("Describe changed to %#v", d)
	}
}
