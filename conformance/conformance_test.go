package conformance

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
)

// selectBackends keeps the rows named in ANYSQS_CONFORMANCE_BACKENDS (comma-separated),
// or, when it is unset, every row that is not hidden; `make conformance BACKEND=x` sets it.
// Hidden rows (deliberately broken drivers) run only when named. Rows named in
// ANYSQS_CONFORMANCE_SKIP never run.
func selectBackends(all ...backend) []backend {
	want := os.Getenv("ANYSQS_CONFORMANCE_BACKENDS")
	skip := strings.Split(os.Getenv("ANYSQS_CONFORMANCE_SKIP"), ",")
	var out []backend
	for _, b := range all {
		if slices.Contains(skip, b.name) {
			continue
		}
		if want == "" && !b.hidden {
			out = append(out, b)
		}
		for _, w := range strings.Split(want, ",") {
			if want != "" && strings.TrimSpace(w) == b.name {
				out = append(out, b)
			}
		}
	}
	return out
}

// TestMain raises the default -parallel: cases of service-clock backends spend their
// time waiting in real time and should overlap, while cpuSlots keeps cases of
// gateway-clock backends to the old default. An explicit -test.parallel is kept.
func TestMain(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "64")
	}
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}

// TestConformance runs every case on every backend, the rows concurrently:
// TestConformance/<backend>/<capabilityID>/<case>.
func TestConformance(t *testing.T) {
	cases := allCases()
	if err := checkCaseNames(cases); err != nil {
		t.Fatal(err)
	}
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rec := &runRecord{row: b, started: time.Now().UTC()}
			t.Cleanup(func() { rec.write(t) })
			for _, c := range cases {
				t.Run(c.Path(), func(t *testing.T) {
					if b.parallel {
						t.Parallel()
					}
					runCase(t, b, c, rec, protocolJSON)
				})
			}
		})
	}
}

// TestConformanceQuery runs every case again on the embedded backend with the SDK
// speaking the Query protocol, the one older SDKs and Debian's AWS CLI use: the same
// semantics must hold whichever protocol carries them.
func TestConformanceQuery(t *testing.T) {
	b := sqliteBackend()
	t.Run(b.name, func(t *testing.T) {
		for _, c := range allCases() {
			t.Run(c.Path(), func(t *testing.T) {
				t.Parallel()
				runCase(t, b, c, nil, protocolQuery)
			})
		}
	})
}

// runCase starts a harness and dispatches on the declared levels of the case's capabilities.
func runCase(t *testing.T, b backend, c tc, rec *runRecord, p wireProtocol) {
	release := takeCPUSlot(t)
	h := newHarnessWith(t, b, harnessOptions{protocol: p, maxInFlight: c.MaxInFlight})
	if h.realClock {
		release() // its time goes to waiting, not to the CPU
	}
	if rec != nil {
		rec.describe(h)
	}
	dispatch(h, c)
}

// runRecord collects, for the compatibility report, what one backend declared; the
// cases' outcomes come from go test -json.
type runRecord struct {
	mu      sync.Mutex
	row     backend
	started time.Time
	desc    *drivers.Description
}

func (r *runRecord) describe(h *H) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.desc == nil {
		d := h.Desc
		r.desc = &d
	}
}

// write saves <dir>/<backend>.declarations.json with the report package's writer; dir is
// ANYSQS_CONFORMANCE_OUT, or a directory under the system temp dir (logged).
func (r *runRecord) write(t *testing.T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.desc == nil {
		return // nothing ran (service unavailable)
	}
	dir := os.Getenv("ANYSQS_CONFORMANCE_OUT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "anysqs-conformance")
	}
	d := declarationsOf(r.row.name, *r.desc, r.started, report.GitCommit(".."), r.row.served, realClockBudget)
	if r.row.target != nil {
		d.Target = r.row.target(r.desc.ServiceVersion)
	}
	d.TestOnly, d.Reference = r.row.testOnly, r.row.reference
	if !r.row.served && rowExists(r.row.name+"-served") {
		d.Served = r.row.name + "-served"
	}
	// A backend of the matrix must say how it runs: the report shows it first.
	if missing := r.desc.Operations.Missing(); len(missing) > 0 && !r.row.testOnly && !r.row.reference {
		t.Errorf("%s declares no operational %s (drivers.Description.Operations)", r.row.name, strings.Join(missing, ", "))
	}
	if err := report.WriteDeclarations(dir, d); err != nil {
		t.Errorf("declarations record: %v", err)
		return
	}
	t.Logf("declarations written to %s", filepath.Join(dir, r.row.name+".declarations.json"))
}
