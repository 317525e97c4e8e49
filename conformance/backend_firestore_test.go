package conformance_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/firestore"
)

// prepareFirestore gives each case a project of its own on the Firestore emulator: the
// emulator keeps one database per project and its transaction locks are per database,
// so cases neither see nor wait for each other. The project's documents are dropped when
// the case ends, through the emulator's own reset endpoint.
func prepareFirestore(t *testing.T) storage {
	addr := os.Getenv("FIRESTORE_EMULATOR_HOST")
	if addr == "" {
		skipUnavailable(t, "the Firestore emulator (scripts/services/firestore.sh start): FIRESTORE_EMULATOR_HOST is not set")
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		skipUnavailable(t, "the Firestore emulator at %s (scripts/services/firestore.sh start): %v", addr, err)
	}
	c.Close()
	project := "anysqs-conf-" + randomHex(6)
	t.Cleanup(func() { dropEmulatorProject(t, addr, project) })
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return firestore.Open(ctx, firestore.Options{Project: project})
	}}
}

// firestoreTarget names the emulator and its version (from the service script).
func firestoreTarget(string) string {
	v := os.Getenv("ANYSQS_FIRESTORE_EMULATOR_VERSION")
	if v == "" {
		v = "(version unknown)"
	}
	return "Cloud Firestore emulator " + v + " (google-cloud-cli), local"
}

// dropEmulatorProject empties an emulator project (DELETE .../documents), so a long-lived
// emulator does not keep every case's data in memory.
func dropEmulatorProject(t *testing.T, addr, project string) {
	req, err := http.NewRequest(http.MethodDelete, "http://"+addr+"/emulator/v1/projects/"+project+"/databases/(default)/documents", nil)
	if err != nil {
		t.Logf("empty emulator project %s: %v", project, err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Logf("empty emulator project %s: %v", project, err)
		return
	}
	resp.Body.Close()
}
