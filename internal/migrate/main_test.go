package migrate_test

import (
	"flag"
	"os"
	"testing"

	"github.com/anysqs/anysqs/internal/servetest"
)

// TestMain raises the default -parallel (GOMAXPROCS): TestMigrate's pairs spend most of
// their time waiting for delayed and in-flight messages and for the emulators, and
// should overlap. An explicit -test.parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "6")
	}
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}
