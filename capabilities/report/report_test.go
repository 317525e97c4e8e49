package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var runDate = time.Date(2026, 11, 29, 20, 0, 0, 0, time.UTC)

// declare returns declarations for every catalog capability: Native unless levels says
// otherwise.
func declare(levels map[capabilities.ID]capabilities.Level) []capabilities.Declaration {
	var ds []capabilities.Declaration
	for _, e := range capabilities.All() {
		d := capabilities.Declaration{ID: e.ID, Level: capabilities.Native}
		if l, ok := levels[e.ID]; ok {
			d.Level = l
		}
		switch d.Level {
		case capabilities.Degraded:
			d.Note = "the queue's DelaySeconds applies instead"
		case capabilities.Unsupported:
			d.Note = "the backend has no bulk delete"
		}
		if e.ID == capabilities.LongPolling {
			d.Limits = map[string]string{"mode": "native", "max_overrun_ms": "0"}
		}
		ds = append(ds, d)
	}
	return ds
}

// goTestJSON builds a synthetic go test -json stream, as cmd/test2json writes it.
type goTestJSON struct{ bytes.Buffer }

func (g *goTestJSON) event(action, test, output string) {
	ev := map[string]any{"Time": "2026-11-29T20:00:00Z", "Action": action, "Package": "github.com/anysqs/anysqs/conformance"}
	if test != "" {
		ev["Test"] = test
	}
	if output != "" {
		ev["Output"] = output
	}
	b, _ := json.Marshal(ev)
	g.Write(append(b, '\n'))
}

// testCase records one case: run, output lines, then its result (pass, fail or skip).
func (g *goTestJSON) testCase(backend, capability, name, result string, output ...string) {
	test := "TestConformance/" + backend + "/" + capability + "/" + name
	g.event("run", test, "")
	g.event("output", test, "=== RUN   "+test+"\n")
	for _, o := range output {
		g.event("output", test, "    case_test.go:42: "+o+"\n")
	}
	g.event("output", test, "--- "+strings.ToUpper(result)+": "+test+" (0.01s)\n")
	g.event(result, test, "")
}

// everyCase passes one case per capability of decls, except the IDs in skip.
func (g *goTestJSON) everyCase(backend string, decls []capabilities.Declaration, skip ...capabilities.ID) {
	g.event("run", "TestConformance", "")
	g.event("run", "TestConformance/"+backend, "")
	for _, d := range decls {
		if !contains(skip, d.ID) {
			g.testCase(backend, string(d.ID), "basic", "pass")
		}
	}
}

func (g *goTestJSON) finish(backend, result string) {
	g.event(result, "TestConformance/"+backend, "")
	g.event(result, "TestConformance", "")
	g.event("output", "", strings.ToUpper(result)+"\n")
	g.event(result, "", "")
}

func contains(ids []capabilities.ID, id capabilities.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// generate writes declarations for backend, runs Generate on in and returns the summary,
// the output directory and its error.
func generate(t *testing.T, backend string, decls []capabilities.Declaration, in *goTestJSON, opts report.Options) (report.Summary, string, error) {
	t.Helper()
	declDir, out := t.TempDir(), t.TempDir()
	if decls != nil {
		d := report.NewDeclarations(backend, "0.1.0", "memdb 1.2.3", decls, runDate, "0123456789abcdef0123456789abcdef01234567")
		d.Target, d.Clock, d.ReceiptScope = "memdb 1.2.3 in-process", "gateway", "storage"
		if opts.OutDir != "" { // a test profile beside the backend: service clock
			d.Clock, d.ReceiptScope, d.RealClockBudget, d.TestOnly = "service", "instance", "45s", true
		}
		if !d.TestOnly { // every property but the cost drivers, which the page must call missing
			d.Operations = &capabilities.Operations{RunsWhere: "in the test process", ScaleOut: "one gateway",
				Durability: "none: memory only", Availability: "the process", Ordering: "FIFO per group",
				Throughput: "memory bound"}
		}
		if err := report.WriteDeclarations(declDir, d); err != nil {
			t.Fatal(err)
		}
	}
	if opts.OutDir != "" {
		out = opts.OutDir
	}
	opts.TestJSON, opts.DeclarationsDir, opts.OutDir = in, declDir, out
	sum, err := report.Generate(opts)
	return sum, out, err
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGoldenReport(t *testing.T) {
	decls := declare(map[capabilities.ID]capabilities.Level{
		capabilities.DelayMessage: capabilities.Degraded,
		capabilities.QueuePurge:   capabilities.Unsupported,
	})
	var in goTestJSON
	in.everyCase("memdb", decls)
	in.testCase("memdb", "fifo.ordering+fifo.group-batch", "ten_in_one_group", "pass")
	in.testCase("memdb", "receipt.durable", "after_restart", "skip", "restart needs a file-backed database")
	in.finish("memdb", "pass")
	var progressed int
	sum, out, err := generate(t, "memdb", decls, &in, report.Options{Progress: func(report.CaseResult) { progressed++ }})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if want := len(decls) + 2; progressed != want {
		t.Errorf("progress called %d times, want %d", progressed, want)
	}
	if len(sum.Backends) != 1 || len(sum.Backends[0].Failures) != 0 || sum.Backends[0].Totals.NotRun != 1 {
		t.Errorf("summary = %+v", sum)
	}

	// A test profile on a service clock, in the same directory: its own section, no
	// matrix column, and a case that needed a gateway clock.
	var pin goTestJSON
	pin.everyCase("memdb-profile", decls, capabilities.VisibilityMax)
	pin.testCase("memdb-profile", "visibility.max", "twelve-hours-accepted", "skip", "needs a gateway clock: 12h of visibility")
	pin.finish("memdb-profile", "pass")
	psum, _, err := generate(t, "memdb-profile", decls, &pin, report.Options{OutDir: out})
	if err != nil {
		t.Fatalf("Generate profile: %v", err)
	}
	if pt := psum.Backends[0].Totals; pt.NeedsGatewayClock != 1 || pt.NotRun != 0 || pt.ClockBound != 1 {
		t.Errorf("profile totals = %+v, want one case and one capability needing a gateway clock", pt)
	}
	for _, name := range []string{"memdb.md", "memdb.json", "memdb-profile.md", "memdb-profile.json", "README.md", "index.html"} {
		got := read(t, filepath.Join(out, name))
		golden := filepath.Join("testdata", "golden", name)
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := read(t, golden); got != want {
			t.Errorf("%s differs from %s (run go test -update to accept):\n%s", name, golden, firstDiff(got, want))
		}
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}
