package conformance

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/testenv"
)

// lyingDriver declares everything the embedded backend declares, but its
// ChangeVisibility reports success without doing anything: a declaration of
// visibility.change that the backend does not deliver.
type lyingDriver struct{ drivers.Driver }

func (d lyingDriver) Describe(ctx context.Context) (drivers.Description, error) {
	desc, err := d.Driver.Describe(ctx)
	desc.Name = "sqlite-lying"
	return desc, err
}

func (d lyingDriver) ChangeVisibility(_ context.Context, req drivers.ChangeVisibilityRequest) (drivers.BatchResult, error) {
	var res drivers.BatchResult
	for _, e := range req.Entries {
		res.Entries = append(res.Entries, drivers.EntryResult{EntryID: e.EntryID})
	}
	return res, nil
}

// lyingBackend is a hidden row of the backend table: it runs only when named, by
// TestReportCatchesFalseDeclaration.
func lyingBackend() backend {
	return backend{name: "sqlite-lying", parallel: true, hidden: true, prepare: func(t *testing.T) storage {
		st := rowNamed("sqlite").prepare(t)
		return storage{open: func(ctx context.Context) (drivers.Driver, error) {
			d, err := st.open(ctx)
			if err != nil {
				return nil, err
			}
			return lyingDriver{d}, nil
		}}
	}}
}

// TestReportCatchesFalseDeclaration runs the suite's visibility.change cases against the
// lying driver in a child process, as `anysqs report` would, and checks that the
// compatibility report fails and names the capability: a false declaration cannot pass.
func TestReportCatchesFalseDeclaration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a child process")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		testenv.Unavailable(t, "go command for test2json: %v", err)
	}
	decls := t.TempDir()
	cmd := exec.Command(goTool, "tool", "test2json", "-p", "github.com/anysqs/anysqs/conformance",
		os.Args[0], "-test.v=test2json", "-test.run", "^TestConformance$/^sqlite-lying$/visibility.change")
	cmd.Env = append(os.Environ(), "ANYSQS_CONFORMANCE_BACKENDS=sqlite-lying", "ANYSQS_CONFORMANCE_OUT="+decls)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil {
		t.Fatalf("the suite passed against a driver that ignores ChangeMessageVisibility:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"Action":"fail","Package":"github.com/anysqs/anysqs/conformance","Test":"TestConformance/sqlite-lying/visibility.change/`) {
		t.Fatalf("no visibility.change case failed:\n%s", out.String())
	}
	sum, err := report.Generate(report.Options{TestJSON: &out, DeclarationsDir: decls, OutDir: t.TempDir(), AllowNoEvidence: true})
	if !errors.Is(err, report.ErrFailed) {
		t.Fatalf("report over the lying driver: error %v, want report.ErrFailed", err)
	}
	for _, b := range sum.Backends {
		if b.Backend == "sqlite-lying" && strings.Contains(strings.Join(b.Failures, "\n"), "visibility.change") {
			return
		}
	}
	t.Fatalf("report failures do not name visibility.change: %+v", sum.Backends)
}
