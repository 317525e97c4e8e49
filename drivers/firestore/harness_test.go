package firestore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/firestore"
	"github.com/anysqs/anysqs/internal/testenv"
)

// testProject starts the emulator project of each test case.
const testProject = "anysqs-test"

// emulator returns the emulator's address, or skips the test (fails it under CI=true)
// when none answers.
func emulator(t testing.TB) string {
	t.Helper()
	return testenv.FirestoreEmulator(t)
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
	addr := emulator(t)
	// A project per case: the emulator's transaction locks are per database, and cases
	// sharing one would wait for each other's lock timeouts.
	project := testenv.FirestoreProject(t, addr, testProject+"-")
	return firestore.Options{Project: project, Prefix: newPrefix()}
}

func sameStorage(t testing.TB, d drivers.Driver) firestore.Options {
	o, ok := storages.Load(d)
	if !ok {
		t.Fatalf("driver %p was not opened by openDriver", d)
	}
	return o.(firestore.Options)
}
