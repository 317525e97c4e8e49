package migrate_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
)

// killSide is one backend of a subprocess migration: the environment that points its
// shipped configuration at fresh test storage, and a way to open it in this process.
type killSide struct {
	config string
	env    []string // ANYSQS_* as servetest gives them
}

func newKillSide(t *testing.T, backend string) killSide {
	return killSide{config: servetest.Config(servetest.Backends[backend]), env: servetest.BackendEnv(t, backend)}
}

// prefixed returns the side's environment for `anysqs migrate`: ANYSQS_X as PREFIX_X.
func (s killSide) prefixed(prefix string) []string {
	var out []string
	for _, kv := range s.env {
		out = append(out, prefix+strings.TrimPrefix(kv, "ANYSQS_"))
	}
	return out
}

func (s killSide) open(t *testing.T, backend string) drivers.Driver {
	t.Helper()
	return openWithEnv(t, backend, s.env).Driver
}

// seedBulk fills the source with n standard messages in two queues and a FIFO queue of
// six groups, and returns id → body and the FIFO bodies per group in send order.
func seedBulk(t *testing.T, d drivers.Driver, n int) (map[string]string, map[string][]string) {
	t.Helper()
	ctx := context.Background()
	bodies := map[string]string{}
	fifo := map[string][]string{}
	now := time.Now()
	for _, q := range []drivers.Queue{
		{Name: "bulk-a", Attributes: standardAttrs()},
		{Name: "bulk-b", Attributes: standardAttrs()},
		{Name: "ordered.fifo", Attributes: fifoAttrs()},
	} {
		q.CreatedAt, q.LastModified = now, now
		if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: q}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 10 {
		queue := "bulk-a"
		if i%20 == 10 {
			queue = "bulk-b"
		}
		var entries []drivers.SendEntry
		for j := range 10 {
			e := drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: newID(), Body: fmt.Sprintf("m%06d", i+j),
				Attributes: map[string]drivers.MessageAttribute{"i": {DataType: "Number", StringValue: fmt.Sprint(i + j)}}}
			if i%50 == 40 { // every fifth batch: the FIFO queue, its groups interleaved
				queue = "ordered.fifo"
				e.MessageGroupID = fmt.Sprintf("g%d", (i+j)%6)
				e.MessageDeduplicationID = e.Body
				fifo[e.MessageGroupID] = append(fifo[e.MessageGroupID], e.Body)
			}
			bodies[e.MessageID] = e.Body
			entries = append(entries, e)
		}
		res, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: queue, Now: time.Now(), Entries: entries})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Entries {
			if e.Err != nil {
				t.Fatal(e.Err)
			}
		}
	}
	return bodies, fifo
}

var mayDupLine = regexp.MustCompile(`at most (\d+) messages may be duplicated.*`)

// TestKillAndResume runs `anysqs migrate --mode move` from SQLite to PostgreSQL as a
// process, kills it with SIGKILL at every step of a send (ANYSQS_MIGRATE_KILL_AT: the
// process kills itself there) and once from outside when a queue is done, resumes each
// time, and checks that every message is at the destination exactly once, or more
// often only as many times as the final report allows.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	n := 3000
	if v, _ := strconv.Atoi(os.Getenv("ANYSQS_MIGRATE_KILL_MESSAGES")); v > 0 {
		n = v
	}
	src, dst := newKillSide(t, "sqlite"), newKillSide(t, "postgres")
	srcDrv := src.open(t, "sqlite")
	bodies, fifo := seedBulk(t, srcDrv, n)
	srcDrv.Close() // one process at a time on a SQLite data directory
	bin := servetest.Binary(t)
	state := filepath.Join(t.TempDir(), "state.json")
	run := func(killAt string, stopWhen string) (stdout string, killed bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "migrate", "--from", src.config, "--to", dst.config, "--mode", "move",
			"--state", state, "--visibility-timeout", "1s", "--verify")
		cmd.Env = append(append(append(os.Environ(), src.prefixed("ANYSQS_FROM_")...), dst.prefixed("ANYSQS_TO_")...),
			"ANYSQS_MIGRATE_KILL_AT="+killAt)
		var out bytes.Buffer
		cmd.Stdout = &out
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var logs strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.WriteString(sc.Text() + "\n")
			if stopWhen != "" && strings.Contains(sc.Text(), stopWhen) {
				_ = cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return out.String(), true
			}
		}
		if err != nil {
			t.Fatalf("migrate (kill at %q): %v\nstdout:\n%s\nstderr:\n%s", killAt, err, out.String(), logs.String())
		}
		return out.String(), false
	}
	kills := []struct{ at, when string }{
		{"sending:3", ""},   // intent journaled, nothing sent
		{"sent:5", ""},      // the destination acknowledged, the journal does not know
		{"journaled:9", ""}, // journaled as sent, not deleted at the source
		{"deleted:14", ""},  // a whole batch done
		{"", "queue done"},  // from outside, after a queue
		{"sent:40", ""},     // again, deep into the next queue
		{"sent:3", ""},      // and in the FIFO queue or just before it
	}
	for _, k := range kills {
		if _, killed := run(k.at, k.when); !killed {
			t.Fatalf("the run to kill at %q %q finished first: kill earlier", k.at, k.when)
		}
	}
	out, _ := run("", "")
	t.Logf("final run:\n%s", out)
	m := mayDupLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("final report has no duplicate count:\n%s", out)
	}
	mayDup, _ := strconv.Atoi(m[1])

	ctx := context.Background()
	dstDrv := dst.open(t, "postgres")
	seen := map[string]int{}
	for _, q := range []string{"bulk-a", "bulk-b", "ordered.fifo"} {
		err := browseAll(ctx, dstDrv, q, func(b drivers.BrowsedMessage) {
			seen[b.MessageID]++
			if bodies[b.MessageID] != b.Body {
				t.Errorf("%s: message %s has body %q, want %q", q, b.MessageID, b.Body, bodies[b.MessageID])
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	missing, repeats := 0, 0
	for id := range bodies {
		switch c := seen[id]; {
		case c == 0:
			missing++
		case c > 1:
			repeats += c - 1
		}
	}
	t.Logf("%d messages, %d kills: %d missing, %d repeated; final report: %s", len(bodies), len(kills), missing, repeats, m[0])
	if missing > 0 || repeats > mayDup || len(seen) != len(bodies) {
		t.Errorf("%d missing, %d repeated (%d allowed), %d ids at the destination for %d sent", missing, repeats, mayDup, len(seen), len(bodies))
	}
	srcDrv = src.open(t, "sqlite")
	for _, q := range []string{"bulk-a", "bulk-b", "ordered.fifo"} {
		if left := countStates(t, srcDrv, q); len(left) > 0 {
			t.Errorf("source %s still has %v", q, left)
		}
	}
	total := 0
	for _, b := range fifo {
		total += len(b)
	}
	if got := receiveFIFO(t, dstDrv, "ordered.fifo", total); !reflect.DeepEqual(got, fifo) {
		t.Errorf("FIFO order at the destination differs:\n got %v\nwant %v", got, fifo)
	}
}

func browseAll(ctx context.Context, d drivers.Driver, queue string, fn func(drivers.BrowsedMessage)) error {
	after := ""
	for {
		res, err := d.BrowseMessages(ctx, drivers.BrowseMessagesRequest{Name: queue, Now: time.Now(), After: after, Limit: 100})
		if err != nil {
			return err
		}
		for _, b := range res.Messages {
			fn(b)
		}
		if after = res.NextAfter; after == "" {
			return nil
		}
	}
}
