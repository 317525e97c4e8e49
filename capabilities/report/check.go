package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Check compares the reports a fresh run wrote into freshDir with the committed ones in
// committedDir and returns every difference a reader of the committed report would care
// about: a capability's level, limits, note or verdict, or a case that appeared,
// disappeared or changed outcome. Run metadata (date, commit, service version) is
// ignored, so the committed report stays valid on another machine, and so are the AWS
// confirmations, which are derived from the reference run's report.
//
// Every committed report must have a fresh counterpart that ran: a backend whose service
// was missing is a difference, not a pass; the reference run against AWS SQS is exempt.
// only, if not empty, names the backends this run regenerates; committed reports of
// other backends are then not required.
func Check(committedDir, freshDir string, only []string) ([]string, error) {
	fresh, err := readReports(freshDir)
	if err != nil {
		return nil, err
	}
	committed, err := readReports(committedDir)
	if err != nil {
		return nil, err
	}
	ran := map[string]bool{}
	for _, f := range fresh {
		ran[f.Backend] = f.Totals.Cases > f.Totals.NotRun
	}
	var diffs []string
	for _, c := range committed {
		// A reference run needs AWS credentials and the network, which CI lacks.
		if !ran[c.Backend] && !c.Run.Reference && (len(only) == 0 || slices.Contains(only, c.Backend)) {
			diffs = append(diffs, fmt.Sprintf("%s: committed report, but the backend did not run "+
				"(service not available?); start its service, or pass --backends to check others only", c.Backend))
		}
	}
	for _, f := range fresh {
		if !ran[f.Backend] {
			continue
		}
		b, err := os.ReadFile(filepath.Join(committedDir, f.Backend+".json"))
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: no committed report (%v); run `make report`", f.Backend, err))
			continue
		}
		var c BackendReport
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Backend, err)
		}
		diffs = append(diffs, compareReports(c, f)...)
	}
	return diffs, nil
}

func compareReports(committed, fresh BackendReport) []string {
	var diffs []string
	add := func(format string, args ...any) {
		diffs = append(diffs, fresh.Backend+": "+fmt.Sprintf(format, args...))
	}
	old := map[string]CapabilityResult{}
	for _, c := range committed.Capabilities {
		old[c.ID] = c
	}
	for _, n := range fresh.Capabilities {
		o, ok := old[n.ID]
		delete(old, n.ID)
		if !ok {
			add("%s: not in the committed report", n.ID)
			continue
		}
		if o.Level != n.Level || o.Verdict != n.Verdict {
			add("%s: committed %s/%s, fresh run %s/%s", n.ID, o.Level, o.Verdict, n.Level, n.Verdict)
		}
		if o.Note != n.Note || !maps.Equal(o.Limits, n.Limits) {
			add("%s: note or limits changed", n.ID)
		}
		oc := map[string]Status{}
		for _, cs := range o.Cases {
			oc[cs.Test] = cs.Status
		}
		for _, cs := range n.Cases {
			s, ok := oc[cs.Test]
			delete(oc, cs.Test)
			switch {
			case !ok:
				add("%s: new case %s (%s)", n.ID, cs.Test, cs.Status)
			case s != cs.Status:
				add("%s: case %s was %s, now %s", n.ID, cs.Test, s, cs.Status)
			}
		}
		for _, t := range slices.Sorted(maps.Keys(oc)) {
			add("%s: case %s is gone", n.ID, t)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(old)) {
		add("%s: in the committed report but not in the fresh run", id)
	}
	return diffs
}
