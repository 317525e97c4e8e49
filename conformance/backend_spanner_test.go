package conformance_test

import (
	"context"
	"os"
	"testing"
	"time"

	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/spanner"
)

// spannerTarget names the emulator and its version (from scripts/services/spanner.sh),
// or, without an emulator, the service the driver reports.
func spannerTarget(serviceVersion string) string {
	if os.Getenv("SPANNER_EMULATOR_HOST") == "" {
		return serviceVersion
	}
	v := os.Getenv("ANYSQS_TEST_SPANNER_EMULATOR_VERSION")
	if v == "" {
		v = "(version unknown)"
	}
	return "Cloud Spanner emulator " + v + " (official, google-cloud-cli), local"
}

// prepareSpanner gives each case a database of its own on the emulator, which the
// driver creates on first open (a few milliseconds there) and the cleanup drops: cases
// never see each other's queues or sweeps.
func prepareSpanner(t *testing.T) storage {
	if os.Getenv("SPANNER_EMULATOR_HOST") == "" {
		skipUnavailable(t, "SPANNER_EMULATOR_HOST is not set (eval \"$(scripts/services/spanner.sh start)\")")
	}
	o := spanner.Options{Project: "anysqs-conformance", Instance: "anysqs", Database: "c" + randomHex(8)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		dc, err := database.NewDatabaseAdminClient(ctx)
		if err != nil {
			t.Logf("drop database %s: %v", o.Database, err)
			return
		}
		defer dc.Close()
		if err := dc.DropDatabase(ctx, &databasepb.DropDatabaseRequest{
			Database: "projects/" + o.Project + "/instances/" + o.Instance + "/databases/" + o.Database}); err != nil {
			t.Logf("drop database %s: %v", o.Database, err)
		}
	})
	return storage{open: func(ctx context.Context) (drivers.Driver, error) {
		return spanner.Open(ctx, o)
	}}
}
