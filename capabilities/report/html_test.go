package report

import (
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
)

// The page leads with what differs, says each cell in words, shows notes of non-native
// cells without hovering, and flags a report whose code changed after its run.
func TestPageHelpsChoose(t *testing.T) {
	old := commitsSince
	defer func() { commitsSince = old }()
	commitsSince = func(commit string, paths ...string) (int, bool) { return map[string]int{"aaa": 3}[commit], true }
	mk := func(name, commit, level, note string) BackendReport {
		return BackendReport{Format: FormatReport, Backend: name, Commit: commit, Date: "2026-11-30T10:00:00Z",
			Run: RunConditions{Target: name + " 1.0 (official emulator)"},
			Capabilities: []CapabilityResult{
				{ID: "queue.create", Level: "native", Verdict: Verified},
				{ID: "delay.message", Level: level, Note: note, Verdict: Verified},
			}}
	}
	one := mk("one", "aaa", "native", "")
	one.Operations = &capabilities.Operations{Durability: "fsync before the answer", ScaleOut: "one gateway per file"}
	page, err := pageHTML([]BackendReport{one, mk("two", "bbb", "degraded", "delays capped at 60 s")}, false)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	differ, same := strings.Index(html, ">delay.message<"), strings.Index(html, ">queue.create<")
	for _, want := range []string{"degraded: fallback confirmed", `<span class="note">delays capped at 60 s</span>`,
		"one 1.0 (official emulator)", "run 2026-11-30", "STALE: 3 commits since this run changed drivers/one",
		"Native and confirmed on every backend (1 capabilities)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if differ < 0 || same < 0 || differ > same {
		t.Errorf("the differing capability must come first (%d, %d)", differ, same)
	}
	// How the backends run comes first, in words, each property in its own row; a
	// driver that declares none is said to, not left blank.
	ops, caps := strings.Index(html, "<h2>How each backend runs</h2>"), strings.Index(html, "<h2>Where the capabilities differ</h2>")
	if ops < 0 || caps < 0 || ops > caps {
		t.Errorf("the operational table must come before the capabilities (%d, %d)", ops, caps)
	}
	for _, want := range []string{"<tr><th>durability</th><td>fsync before the answer</td><td>not declared by the driver</td></tr>",
		"<tr><th>scale-out</th><td>one gateway per file</td><td>not declared by the driver</td></tr>"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "STALE: 0") || strings.Count(html, "STALE") != 2 { // matrix and section of "one" only
		t.Errorf("only the report with commits since is stale: %d flags", strings.Count(html, "STALE"))
	}
}
