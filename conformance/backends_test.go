package conformance_test

import (
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
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
	// timeout bounds the whole row (zero: no bound); a case starting later fails, and
	// requests of running cases are cancelled.
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
	// deadline, set by TestConformance from timeout, is when the row's time is up.
	deadline time.Time
}

// backends returns the rows of the table this run selects.
func backends() []backend { return selectBackends(backendTable()...) }

// backendTable is THE table: every case runs once per row. Whose clock keeps queue time
// and where receipts are valid come from each driver's Describe at run time.
func backendTable() []backend {
	return append([]backend{
		backend{name: "sqlite", prepare: prepareSQLite, parallel: true, timeout: 10 * time.Minute,
			target: func(v string) string { return "SQLite " + v + " embedded" }},
		backend{name: "postgres", service: "scripts/services/postgres.sh", prepare: preparePostgres,
			parallel: true, timeout: 10 * time.Minute,
			target: func(v string) string { return "PostgreSQL " + v + " local server" }},
		backend{name: "postgres-pgbouncer", service: "scripts/services/postgres.sh", prepare: preparePostgresPgBouncer,
			parallel: true, timeout: 10 * time.Minute, testOnly: true,
			target: func(v string) string { return "PostgreSQL " + v + " local server through PgBouncer in session pooling" }},
		backend{name: "spanner", service: "scripts/services/spanner.sh", prepare: prepareSpanner,
			parallel: true, timeout: 10 * time.Minute, target: spannerTarget},
		backend{name: "firestore", service: "scripts/services/firestore.sh", prepare: prepareFirestore,
			parallel: true, timeout: 10 * time.Minute, target: firestoreTarget},
		backend{name: "cosmos", service: "scripts/services/cosmos.sh", prepare: prepareCosmos, parallel: true, timeout: 10 * time.Minute,
			target: cosmosTarget},
		backend{name: "servicebus", prepare: prepareServiceBus, parallel: true, timeout: 8 * time.Minute,
			target: serviceBusTarget},
		backend{name: "broker-profile", prepare: prepareBrokerProfile, parallel: true, timeout: 8 * time.Minute,
			testOnly: true, target: func(v string) string { return "internal/brokerprofile over " + v + ", embedded" }},
		sqlitePluginRow(),
		postgresPluginRow(),
		endpointRow(conformanceEndpoint(), os.Getenv("ANYSQS_CONFORMANCE_REFERENCE")),
		lyingBackend(),
	}, servedRows()...)
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
