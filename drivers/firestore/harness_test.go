package firestore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/firestore"
)

// testProject is the emulator project of the tests; cases keep apart by collection prefix.
const testProject = "anysqs-test"

// emulator returns the emulator's address, or skips the test (fails it under CI=true)
// when none answers.
func emulator(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("FIRESTORE_EMULATOR_HOST")
	msg := "service not available here: the Firestore emulator (scripts/services/firestore.sh start; FIRESTORE_EMULATOR_HOST unset)"
	if addr != "" {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		msg = "service not available here: the Firestore emulator at " + addr + ": " + err.Error()
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + " (CI=true: not skipping)")
	}
	t.Skip(msg)
	return ""
}

func newPrefix() string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return "t" + hex.EncodeToString(b)
}

// storages remembers which prefix each test driver uses, so Reopen and a second
// instance find the same storage.
var storages sync.Map // *firestore.Driver -> firestore.Options

func openDriver(t testing.TB, o firestore.Options) *firestore.Driver {
	t.Helper()
	d, err := firestore.Open(context.Background(), o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	storages.Store(d, o)
	return d
}

func testOptions(t testing.TB) firestore.Options {
	emulator(t)
	p := newPrefix()
	return firestore.Options{Project: testProject + "-" + p, Prefix: p}
}

func sameStorage(t testing.TB, d drivers.Driver) firestore.Options {
	o, ok := storages.Load(d)
	if !ok {
		t.Fatalf("driver %p was not opened by openDriver", d)
	}
	return o.(firestore.Options)
}
