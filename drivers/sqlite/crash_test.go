package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/drivertest"
	"github.com/anysqs/anysqs/drivers/sqlite"
)

const crashDirEnv = "ANYSQS_SQLITE_CRASH_DIR"

// TestMain runs crashHelper instead of the tests when started as the child process of
// TestKilledProcessKeepsAcknowledgedWrites.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashHelper(dir)
		return
	}
	os.Exit(m.Run())
}

// crashHelper sends messages from several goroutines at once, in batches, so that the
// writes share group commits (each in its savepoint), and prints each acknowledged
// message id until it is killed.
func crashHelper(dir string) {
	ctx := context.Background()
	var out sync.Mutex
	fail := func(err error) {
		out.Lock()
		fmt.Println("error", err)
		os.Exit(1)
	}
	d, err := sqlite.Open(ctx, sqlite.Options{DataDir: dir})
	if err != nil {
		fail(err)
	}
	now := time.Unix(1_800_000_000, 0)
	if _, err := d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "q", Attributes: drivertest.StandardAttributes()}}); err != nil {
		fail(err)
	}
	for w := range crashWriters {
		go func() {
			for i := 0; ; i++ {
				entries := make([]drivers.SendEntry, 10)
				for j := range entries {
					id := fmt.Sprintf("w%d-%d-%d", w, i, j)
					entries[j] = drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: id, Body: id}
				}
				if _, err := d.SendMessages(ctx, drivers.SendMessagesRequest{Name: "q", Now: now, Entries: entries}); err != nil {
					fail(err)
				}
				out.Lock()
				for _, e := range entries {
					fmt.Println("acked", e.MessageID)
				}
				out.Unlock()
			}
		}()
	}
	select {}
}

// crashWriters is how many goroutines of crashHelper send at once.
const crashWriters = 8

// crashAcks is how many acknowledged sends the test waits for before the kill.
const crashAcks = 2000

// TestKilledProcessKeepsAcknowledgedWrites kills (SIGKILL, no Close) a process that is
// writing from several goroutines, then checks that every send it acknowledged is in the
// database.
func TestKilledProcessKeepsAcknowledgedWrites(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "error") {
			t.Fatalf("helper: %s", line)
		}
		if id, ok := strings.CutPrefix(line, "acked "); ok {
			acked[id] = true
			if len(acked) >= crashAcks {
				break
			}
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(acked) < crashAcks {
		t.Fatalf("helper acknowledged only %d sends before exiting", len(acked))
	}

	d := openT(t, dir)
	defer d.Close()
	found := map[string]bool{}
	now := time.Unix(1_800_000_000, 0)
	for {
		res, err := d.ReceiveMessages(context.Background(), drivers.ReceiveMessagesRequest{Name: "q", Now: now, MaxMessages: 10, VisibilityTimeout: 300})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Messages) == 0 {
			break
		}
		for _, m := range res.Messages {
			found[m.MessageID] = true
		}
	}
	for id := range acked {
		if !found[id] {
			t.Fatalf("acknowledged message %s is missing after the kill (%d of %d found)", id, len(found), len(acked))
		}
	}
}
