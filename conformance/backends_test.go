package conformance

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testbed"
)

// backend is one row of the backend table.
type backend struct {
	name string
	// service is the script that starts, stops and describes the backend's service
	// (start|stop|env, under scripts/services); empty for an embedded backend.
	service string
	// prepare creates a fresh, isolated storage for one case, or skips the test when the
	// backend's service is not reachable. Cleanup is registered on t.
	prepare func(t *testing.T) storage
	// target names what the verdicts are obtained against, from the service version the
	// driver reports: "PostgreSQL 15.2 local server".
	target func(serviceVersion string) string
	// parallel says cases may run concurrently.
	parallel bool
	// timeout bounds each case of the row from its start (zero: no bound): a hang guard,
	// after which the case's requests are cancelled. It does not count the time a case
	// waits for its turn, which depends on the machine and the other rows.
	timeout time.Duration
	// testOnly rows judge a test profile, or a backend run another way (through the
	// plugin boundary), not a backend of their own: their reports are generated and
	// checked, and kept out of the backend matrix.
	testOnly bool
	// reference marks the run against AWS SQS itself, whose passed cases confirm the
	// suite's expectations in every backend's report.
	reference bool
	// hidden rows run only when ANYSQS_CONFORMANCE_BACKENDS names them.
	hidden bool
	// served rows run each case against the anysqs binary served from the backend's
	// shipped configuration, on the process's real clock (served_test.go).
	served bool
}

// backends returns the rows of the table this run selects.
func backends() []backend { return selectBackends(backendTable()...) }

// backendTable is THE table: every case runs once per row. Its backends are
// internal/testbed's, each in process, through the plugin boundary where the backend
// runs as a plugin, and served; test profiles follow the backend they run on. Whose
// clock keeps queue time and where receipts are valid come from each driver's Describe
// at run time.
func backendTable() []backend {
	var rows, plugins []backend
	for _, b := range testbed.All {
		rows = append(rows, inProcessRow(b))
		if b.Plugin {
			plugins = append(plugins, pluginRow(b.Name, b.Target, b.Storage))
		}
	}
	rows = append(append(rows, profileRows...), plugins...)
	rows = append(rows, endpointRow(conformanceEndpoint(), os.Getenv("ANYSQS_CONFORMANCE_REFERENCE")), lyingBackend())
	return append(rows, servedRows()...)
}

// inProcessRow runs b's driver in the test process, on storage of the case's own.
func inProcessRow(b testbed.Backend) backend {
	row := backend{name: b.Name, parallel: true, timeout: 10 * time.Minute, target: b.Target,
		prepare: func(t *testing.T) storage {
			opts := b.Storage(t)
			return storage{open: func(ctx context.Context) (drivers.Driver, error) { return b.Open(ctx, opts) }}
		}}
	if b.Service != "" {
		row.service = "scripts/services/" + b.Service + ".sh"
	}
	return row
}

// profileRows are test profiles: rows judging a backend run another way, or a profile
// of one (internal/brokerprofile), reported and checked but kept out of the matrix.
var profileRows = []backend{
	{name: "postgres-pgbouncer", service: "scripts/services/postgres.sh", prepare: preparePostgresPgBouncer,
		parallel: true, timeout: 10 * time.Minute, testOnly: true,
		target: func(v string) string { return "PostgreSQL " + v + " local server through PgBouncer in session pooling" }},
	{name: "broker-profile", prepare: prepareBrokerProfile, parallel: true, timeout: 8 * time.Minute,
		testOnly: true, target: func(v string) string { return "internal/brokerprofile over " + v + ", embedded" }},
}

// sqliteBackend is the table's sqlite row, for tests that need one embedded backend.
func sqliteBackend() backend { return rowNamed("sqlite") }

// postgresBackend is the table's postgres row.
func postgresBackend() backend { return rowNamed("postgres") }

// rowExists reports whether the table has a row called name.
func rowExists(name string) bool {
	for _, b := range backendTable() {
		if b.name == name {
			return true
		}
	}
	return false
}

func rowNamed(name string) backend {
	for _, b := range backendTable() {
		if b.name == name {
			return b
		}
	}
	panic("no backend row " + name)
}

// cpuSlots bounds how many cases of gateway-clock backends run at once: the default
// -parallel, which TestMain raises so that real-clock cases, which mostly wait, overlap.
var cpuSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// takeCPUSlot holds one of cpuSlots until t ends; call it right after t.Parallel in a
// test that creates no parallel subtests.
func takeCPUSlot(t *testing.T) (release func()) {
	cpuSlots <- struct{}{}
	release = sync.OnceFunc(func() { <-cpuSlots })
	t.Cleanup(release)
	return release
}
