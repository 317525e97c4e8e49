//go:build linux

package migrate_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
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
	"github.com/anysqs/anysqs/internal/migrate"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

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

// envInt is the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestKillAndResume runs `anysqs migrate --mode move` from SQLite to PostgreSQL as a
// process, kills it with SIGKILL at every step of a send (ANYSQS_MIGRATE_KILL_AT: the
// process kills itself there), then from outside at random points spread over the rest
// of the move and once when the last queue is done, resumes each time, and
// checks that every message is at the destination exactly once, or more often only as
// many times as the final report allows, with each FIFO group in order.
//
// ANYSQS_MIGRATE_KILL_MESSAGES (default 3,000) and ANYSQS_MIGRATE_KILLS (random kills,
// default 3) size it (make soak-migrate: 100,000 and 8); ANYSQS_MIGRATE_KILL_SEED
// replays the random points of an earlier run, whose seed the test logs.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	n := envInt("ANYSQS_MIGRATE_KILL_MESSAGES", 3000)
	randomKills := envInt("ANYSQS_MIGRATE_KILLS", 3)
	seed := uint64(envInt("ANYSQS_MIGRATE_KILL_SEED", int(time.Now().UnixNano()&math.MaxInt32)))
	t.Logf("random kill points: ANYSQS_MIGRATE_KILL_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	src, dst := testbed.NewSide(t, "sqlite"), testbed.NewSide(t, "postgres")
	srcDrv := openSide(t, src)
	seeding := time.Now()
	bodies, fifo := seedBulk(t, srcDrv, n)
	srcDrv.Close() // one process at a time on a SQLite data directory
	t.Logf("seeded %d messages through the driver in %v", len(bodies), time.Since(seeding).Round(time.Millisecond))
	k := &killRun{t: t, bin: servetest.Binary(t), src: src, dst: dst, state: filepath.Join(t.TempDir(), "state.json")}

	steps := []string{
		"sending:3",   // intent journaled, nothing sent
		"sent:5",      // the destination acknowledged, the journal does not know
		"journaled:9", // journaled as sent, not deleted at the source
		"deleted:14",  // a whole batch done
		"sent:40",     // again, a little further
	}
	moving := time.Now()
	for _, at := range steps {
		if _, killed := k.run(at, "", nil); !killed {
			t.Fatalf("the run to kill at %q finished first: kill earlier", at)
		}
	}
	// One point drawn in each of randomKills equal stretches of what is left to move, so
	// that the kills reach every queue; each lands up to 30 ms (about a batch) after the
	// journal shows the point passed, wherever the workers then are.
	from := journalSent(t, k.state)
	to := n * 95 / 100
	for i := range randomKills {
		lo, hi := from+(to-from)*i/randomKills, from+(to-from)*(i+1)/randomKills
		kp := &killPoint{sent: lo + rng.IntN(max(hi-lo, 1)), after: time.Duration(rng.Int64N(int64(30 * time.Millisecond)))}
		if _, killed := k.run("", "", kp); !killed {
			t.Fatalf("random kill %d (at %d messages moved, then %v) came after the run finished", i+1, kp.sent, kp.after)
		}
		t.Logf("random kill %d: SIGKILL %v after the journal showed %d of %d messages moved (point %d)",
			i+1, kp.after.Round(time.Millisecond), kp.seen, n, kp.sent)
	}
	// From outside once more when the last queue is done, before the verification. (A
	// resumed run logs the queues done before as done again at once.)
	if _, killed := k.run("", `msg="queue done" queue=ordered.fifo`, nil); !killed {
		t.Fatal("the run to kill when the FIFO queue is done finished first")
	}
	out, _ := k.run("", "", nil)
	took := time.Since(moving)
	t.Logf("final run:\n%s", out)
	m := mayDupLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("final report has no duplicate count:\n%s", out)
	}
	mayDup, _ := strconv.Atoi(m[1])

	ctx := context.Background()
	dstDrv := openSide(t, dst)
	seen := map[string]int{}
	for _, q := range []string{"bulk-a", "bulk-b", "ordered.fifo"} {
		err := migrate.BrowseAll(ctx, dstDrv, q, func(b drivers.BrowsedMessage) {
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
	t.Logf("kill counts: %d messages, %d kills (%d at steps, %d at random points), moved in %v: %d missing, %d repeated, %d allowed by the report",
		len(bodies), len(steps)+randomKills+1, len(steps)+1, randomKills, took.Round(time.Second), missing, repeats, mayDup)
	if missing > 0 || repeats > mayDup || len(seen) != len(bodies) {
		t.Errorf("%d missing, %d repeated (%d allowed), %d ids at the destination for %d sent", missing, repeats, mayDup, len(seen), len(bodies))
	}
	srcDrv = openSide(t, src)
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

// killRun runs `anysqs migrate --mode move` between two sides, with one journal.
type killRun struct {
	t        *testing.T
	bin      string
	src, dst testbed.Side
	state    string
}

// killPoint is a kill from outside at a point of the move: after more than sent
// messages are journaled as moved, then after a pause.
type killPoint struct {
	sent  int
	after time.Duration
	seen  int // what the journal showed when the point was reached
}

// run runs the migration once: with killAt set the process kills itself there
// (ANYSQS_MIGRATE_KILL_AT), with stopWhen it is killed when it logs that, with kp at
// that point. It returns the process's stdout and whether SIGKILL ended it.
func (k *killRun) run(killAt, stopWhen string, kp *killPoint) (stdout string, killed bool) {
	t := k.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, "migrate", "--from", k.src.Config, "--to", k.dst.Config, "--mode", "move",
		"--state", k.state, "--visibility-timeout", "1s", "--verify")
	cmd.Env = append(append(os.Environ(), testbed.MigrateEnv(k.src, k.dst)...), "ANYSQS_MIGRATE_KILL_AT="+killAt)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var w *journalWatch
	if kp != nil {
		w = watchJournal(t, k.state) // before the start: the run's first step replaces the journal
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	if w != nil {
		go func() {
			defer close(watched)
			if w.until(func(sent int) bool { kp.seen = sent; return sent > kp.sent }) {
				time.AfterFunc(kp.after, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
			}
		}()
	} else {
		close(watched)
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
	if w != nil {
		w.close()
	}
	<-watched
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
