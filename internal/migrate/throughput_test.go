package migrate_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

var rateLine = regexp.MustCompile(`(\d+) messages in (\S+) \((\d+) messages/s\)`)

// TestThroughput measures `anysqs migrate` from SQLite to PostgreSQL, copy then move, of
// ANYSQS_MIGRATE_THROUGHPUT standard messages (docs/migration.md has the figures). Not
// run unless that variable is set: it takes a while.
func TestThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ANYSQS_MIGRATE_THROUGHPUT"))
	if n <= 0 {
		t.Skip("ANYSQS_MIGRATE_THROUGHPUT is not set (e.g. 20000)")
	}
	src := testbed.NewSide(t, "sqlite")
	d := openSide(t, src)
	now := time.Now()
	if _, err := d.CreateQueue(context.Background(), drivers.CreateQueueRequest{Queue: drivers.Queue{Name: "bulk", Attributes: standardAttrs(), CreatedAt: now, LastModified: now}}); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("x", 200)
	for i := 0; i < n; i += 10 {
		var entries []drivers.SendEntry
		for j := range 10 {
			entries = append(entries, drivers.SendEntry{EntryID: fmt.Sprint(j), MessageID: newID(), Body: body,
				Attributes: map[string]drivers.MessageAttribute{"i": {DataType: "Number", StringValue: fmt.Sprint(i + j)}}})
		}
		if _, err := d.SendMessages(context.Background(), drivers.SendMessagesRequest{Name: "bulk", Now: time.Now(), Entries: entries}); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	bin := servetest.Binary(t)
	for _, mode := range []string{"copy", "move"} {
		dst := testbed.NewSide(t, "postgres")
		cmd := exec.Command(bin, "migrate", "--from", src.Config, "--to", dst.Config, "--mode", mode,
			"--state", filepath.Join(t.TempDir(), "state.json"))
		cmd.Env = append(os.Environ(), testbed.MigrateEnv(src, dst)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("migrate --mode %s: %v\n%s", mode, err, out)
		}
		m := rateLine.FindStringSubmatch(string(out))
		if m == nil {
			t.Fatalf("no rate in:\n%s", out)
		}
		t.Logf("sqlite → postgres, --mode %s: %s messages in %s, %s messages/s", mode, m[1], m[2], m[3])
	}
}
