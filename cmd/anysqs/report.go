package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/internal/cli"
)

// report runs the conformance suite (or reads a saved run) and writes the compatibility
// reports. Running the suite needs the source tree and the Go toolchain: the suite is a
// go test package, so that `go test -json` output alone is enough to rebuild a report.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("report", "[flags]", `Run the conformance suite (from the source tree, with go test) or read a saved run,
and write each backend's compatibility report (<backend>.md and .json), the matrix
README.md and the page index.html. `+"`make report`"+` is the usual way to call it.`)
	backends := fs.String("backends", "", "comma-separated backends to run and check (default: every backend; with --check, each committed report must be among those that ran)")
	fs.StringVar(backends, "backend", "", "same as --backends")
	skip := fs.String("skip", "", "comma-separated backends not to run (with --check, their committed reports are not compared)")
	from := fs.String("from", "", "read this go test -json file instead of running the suite")
	decls := fs.String("declarations", "", "with --from: the directory holding <backend>.declarations.json")
	out := fs.String("out", "docs/compat", "directory for <backend>.md/.json, README.md and index.html")
	allowNoEvidence := fs.Bool("allow-no-evidence", false, "treat capabilities without cases as warnings")
	check := fs.String("check", "", "compare the fresh reports with the committed ones in this directory; differences fail")
	quiet := fs.Bool("quiet", false, "print only the cases that did not pass, then the counts")
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}

	opts := report.Options{
		OutDir:          *out,
		AllowNoEvidence: *allowNoEvidence,
		Progress: func(c report.CaseResult) {
			if !*quiet || c.Status != report.Pass {
				fmt.Fprintln(stderr, c.String())
			}
			if c.Status == report.Fail {
				// The one-line summary names the first line of the test's own output; a
				// failure is read from all of it.
				for _, r := range c.Reason {
					fmt.Fprintln(stderr, "        "+strings.TrimRight(r, "\n"))
				}
			}
		},
	}
	var wait func() error
	if *from != "" {
		if *decls == "" {
			return cli.Usagef("report: --from needs --declarations DIR")
		}
		f, err := os.Open(*from)
		if err != nil {
			return err
		}
		defer f.Close()
		opts.TestJSON, opts.DeclarationsDir = f, *decls
	} else {
		dir, err := os.MkdirTemp("", "anysqs-report-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cmd := exec.CommandContext(ctx, "go", "test", "-json", "-count=1", "-timeout", "25m", "-run", "^TestConformance$", "./conformance/")
		cmd.Env = append(os.Environ(), "ANYSQS_CONFORMANCE_OUT="+dir)
		if *backends != "" {
			cmd.Env = append(cmd.Env, "ANYSQS_CONFORMANCE_BACKENDS="+strings.TrimSpace(*backends))
		}
		if *skip != "" {
			cmd.Env = append(cmd.Env, "ANYSQS_CONFORMANCE_SKIP="+strings.TrimSpace(*skip))
		}
		cmd.Stderr = stderr
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			return err
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("running the conformance suite (needs the source tree and go): %w", err)
		}
		opts.TestJSON, opts.DeclarationsDir, wait = pipe, dir, cmd.Wait
	}

	sum, genErr := report.Generate(opts)
	if wait != nil {
		// The suite's own exit status is not the verdict: a failing case may be exactly
		// what a declaration predicts. The report decides; a crash still shows as a broken run.
		_ = wait()
	}
	for _, b := range sum.Backends {
		status := "passes"
		switch {
		case b.NotRun:
			status = "not run (service not available here)"
			if *check != "" {
				status += "; --check fails unless --backends leaves it out"
			}
		case b.Reference:
			// Its failures question the suite's expectations, not a backend.
			status = fmt.Sprintf("reference run against AWS SQS, %d of %d cases passed", b.Totals.Pass, b.Totals.Cases)
		case len(b.Failures) > 0:
			status = "FAILS"
		}
		fmt.Fprintf(stdout, "%s: %s\n", b.Backend, status)
		for _, f := range b.Failures {
			fmt.Fprintf(stdout, "  - %s\n", f)
		}
	}
	var total report.Totals
	for _, b := range sum.Backends {
		total.Pass += b.Totals.Pass
		total.Fail += b.Totals.Fail
		total.NotRun += b.Totals.NotRun
	}
	fmt.Fprintf(stdout, "conformance: %d passed, %d failed, %d not run, over %d backends\n",
		total.Pass, total.Fail, total.NotRun, len(sum.Backends))
	if !*quiet {
		for _, f := range sum.Files {
			fmt.Fprintln(stdout, "wrote", f)
		}
	}
	if genErr != nil || *check == "" {
		return genErr
	}
	var only []string
	for _, b := range strings.Split(*backends, ",") {
		if b = strings.TrimSpace(b); b != "" {
			only = append(only, b)
		}
	}
	if *skip != "" && len(only) == 0 {
		// Every committed report but the skipped ones must have run.
		committed, err := filepath.Glob(filepath.Join(*check, "*.json"))
		if err != nil {
			return err
		}
		for _, f := range committed {
			if name := strings.TrimSuffix(filepath.Base(f), ".json"); !slices.Contains(strings.Split(*skip, ","), name) {
				only = append(only, name)
			}
		}
	}
	diffs, err := report.Check(*check, *out, only)
	if err != nil {
		return err
	}
	if len(diffs) > 0 {
		for _, d := range diffs {
			fmt.Fprintln(stdout, "  differs:", d)
		}
		return fmt.Errorf("the reports in %s do not match this run (%d differences); regenerate them with `make report`", *check, len(diffs))
	}
	fmt.Fprintf(stdout, "the reports in %s match this run\n", *check)
	return nil
}
