package report

import (
	"bytes"
	"fmt"
	"html/template"
	"os/exec"
	"strconv"
	"strings"

	"github.com/anysqs/anysqs/capabilities"
)

// htmlPage is the view model of index.html.
type htmlPage struct {
	Backends []htmlBackend
	// Differ are the capabilities on which the backends differ, or that some backend
	// does not give natively: what a choice turns on. Same are the rest.
	Differ, Same []htmlRow
	// Profiles are test-only reports: a section each, no matrix column.
	Profiles []htmlBackend
	// Reference is the run against AWS SQS, if recorded: a section, no matrix column.
	Reference *htmlBackend
	Rows      []htmlRow
	// Operations are the backends' operational properties, a row each, in display order.
	Operations []htmlOpsRow
}

// htmlOpsRow is one operational property across the backends.
type htmlOpsRow struct {
	Title string
	Cells []string
}

type htmlBackend struct {
	BackendReport
	Result   string
	Failures []string
	// Stale says how the code moved on since the report's run: "" when it did not (or
	// cannot be told), else e.g. "12 commits since, touching drivers/postgres, gateway".
	Stale string
	// Confirmation is the sentence on the cases AWS SQS confirmed; empty on the reference.
	Confirmation string
}

type htmlRow struct {
	ID, Title string
	Cells     []htmlCell
}

type htmlCell struct {
	Present bool
	Class   string // CSS class: the colour, which only repeats what Text says
	Text    string // level and verdict in words, e.g. "degraded: fallback confirmed"
	Note    string // the declaration's note, shown in the cell for anything not native
	Href    string
	Title   string // tooltip: the evidence in one glance
}

// verdictWords says what a verdict means for a level, without symbols.
func verdictWords(c CapabilityResult) string {
	switch c.Verdict {
	case Verified:
		switch c.Level {
		case "degraded":
			return "fallback confirmed"
		case "unsupported":
			return "rejection confirmed"
		}
		return "confirmed"
	case Failed:
		return "CONTRADICTED by a case"
	case NoEvidence:
		return "no case checks it"
	case NotRunVerdict:
		return "not run"
	case NeedsGatewayClockVerdict:
		return "unchecked (needs a gateway clock)"
	}
	return string(c.Verdict)
}

// clockWords says whose clock a backend's queue time runs on, for an operator.
func clockWords(c string) string {
	switch c {
	case "gateway":
		return "the gateway (timeouts and delays exact to the gateway's clock)"
	case "service":
		return "the service (the gateway cannot move it; timeouts as the service keeps them)"
	}
	return orUnknown(c)
}

// scopeWords says where a backend's receipt handles stay valid.
func scopeWords(s string) string {
	switch s {
	case "storage":
		return "across gateway restarts and instances (kept in storage)"
	case "instance":
		return "only on the gateway instance that received the message, while it runs"
	}
	return orUnknown(s)
}

// commitsSince reports how many commits since commit touched the paths, and whether
// that could be told (git and the commit are available). A variable for the tests.
var commitsSince = func(commit string, paths ...string) (int, bool) {
	commit = strings.TrimSuffix(commit, "-dirty")
	if commit == "" {
		return 0, false
	}
	args := []string{"rev-list", "--count", commit + "..HEAD", "--"}
	for _, p := range paths {
		args = append(args, ":(top)"+p) // from the repository's root, wherever the process runs
	}
	out, err := exec.Command("git", args...).Output()
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	return n, err == nil
}

// staleness says whether the code a report describes changed after its run: the
// backend's driver, the gateway, the capability catalog or the suite.
func staleness(r BackendReport) string {
	paths := []string{"drivers/" + r.Backend, "gateway", "capabilities", "conformance"}
	n, ok := commitsSince(r.Commit, paths...)
	if !ok || n == 0 {
		return ""
	}
	commits := "commits"
	if n == 1 {
		commits = "commit"
	}
	return fmt.Sprintf("STALE: %d %s since this run changed %s", n, commits, strings.Join(paths, ", "))
}

// cellClass picks the colour: green when the SQS behaviour is confirmed, yellow for a
// confirmed fallback, blue for a confirmed rejection, red when the declaration is
// contradicted or unchecked, grey when nothing ran.
func cellClass(c CapabilityResult, noEvidenceOK bool) string {
	switch {
	case c.Verdict == Failed:
		return "failed"
	case c.Verdict == NoEvidence && noEvidenceOK:
		return "noevidence-ok"
	case c.Verdict == NoEvidence:
		return "noevidence"
	case c.Verdict == NotRunVerdict:
		return "notrun"
	case c.Verdict == NeedsGatewayClockVerdict:
		return "clockbound"
	case c.Level == "degraded":
		return "degraded"
	case c.Level == "unsupported":
		return "unsupported"
	}
	return "ok"
}

func cellTitle(r BackendReport, c CapabilityResult) string {
	var b strings.Builder
	b.WriteString(r.Backend + " " + c.ID + ": " + c.Level + ", " + verdictLabel(c.Verdict)[len(verdictSymbol(c.Verdict))+1:])
	b.WriteString("\nservice " + orUnknown(r.ServiceVersion) + ", " + orUnknown(r.Date) + ", commit " + orUnknown(r.Commit))
	for _, cs := range c.Cases {
		b.WriteString("\n" + string(cs.Status) + " " + cs.Case)
	}
	return b.String()
}

func htmlAnchor(backend, id string) string { return backend + "--" + id }

// pageHTML renders the self-contained docs/compat/index.html.
func pageHTML(reps []BackendReport, noEvidenceOK bool) ([]byte, error) {
	var p htmlPage
	section := func(r BackendReport) htmlBackend {
		f := r.failures(noEvidenceOK)
		hb := htmlBackend{BackendReport: r, Result: resultWord(f), Failures: f, Stale: staleness(r)}
		if !r.Run.Reference {
			hb.Confirmation = confirmationSentence(r)
		}
		return hb
	}
	reps, ref := splitReference(reps)
	if ref != nil {
		hb := section(*ref)
		p.Reference = &hb
	}
	reps, profiles := splitTestOnly(reps)
	for _, r := range reps {
		p.Backends = append(p.Backends, section(r))
	}
	for _, r := range profiles {
		p.Profiles = append(p.Profiles, section(r))
	}
	for _, prop := range capabilities.OperationalProperties() {
		row := htmlOpsRow{Title: prop.Title}
		for _, r := range reps {
			row.Cells = append(row.Cells, operationText(r, prop))
		}
		p.Operations = append(p.Operations, row)
	}
	for _, row := range matrixRows(reps) {
		hr := htmlRow{ID: row.id}
		differs := len(row.cells) < len(reps)
		first := ""
		for i, r := range reps {
			c, ok := row.cells[i]
			if !ok {
				hr.Cells = append(hr.Cells, htmlCell{})
				continue
			}
			hr.Title = c.Title
			cell := htmlCell{Present: true, Class: cellClass(c, noEvidenceOK),
				Text: c.Level + ": " + verdictWords(c), Href: "#" + htmlAnchor(r.Backend, c.ID),
				Title: cellTitle(r, c)}
			if c.Level != "native" {
				cell.Note = c.Note
				differs = true
			}
			if c.Verdict != Verified {
				differs = true
			}
			if key := cell.Text + "\x00" + cell.Note; first == "" {
				first = key
			} else if key != first {
				differs = true
			}
			hr.Cells = append(hr.Cells, cell)
		}
		if differs {
			p.Differ = append(p.Differ, hr)
		} else {
			p.Same = append(p.Same, hr)
		}
	}
	t, err := pageTemplate.Clone()
	if err != nil {
		return nil, err
	}
	t.Funcs(template.FuncMap{"class": func(c CapabilityResult) string { return cellClass(c, noEvidenceOK) }})
	var buf bytes.Buffer
	if err := t.Execute(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"anchor":  htmlAnchor,
	"class":   func(c CapabilityResult) string { return cellClass(c, false) },
	"limits":  limitsText,
	"label":   verdictLabel,
	"counts":  caseCounts,
	"day":     day,
	"short":   shortCommit,
	"words":   verdictWords,
	"clock":   clockWords,
	"scope":   scopeWords,
	"inc":     func(n int) int { return n + 1 },
	"failing": func(c CapabilityResult) bool { return c.Verdict == Failed },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>anysqs compatibility</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1240px;padding:0 1em;color:#222;line-height:1.35}
table{border-collapse:collapse;margin:1em 0;width:100%;table-layout:fixed}
th,td{border:1px solid #bbb;padding:.3em .5em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f4f4f4}
th.cap{width:15em}th.prop{width:9em}
td a{color:inherit;display:block}
.note{display:block;font-size:.85em;color:#333;margin-top:.2em}
.ok{background:#d9f2da}.degraded{background:#fff4c2}.unsupported{background:#dde4f7}
.failed{background:#f7b3b3}.noevidence{background:#f9d2b0}.noevidence-ok{background:#fde9d8}.notrun{background:#ececec}.clockbound{background:#eee0f5}
.PASS{color:#1b6e20;font-weight:bold}.FAIL{color:#b71c1c;font-weight:bold}
.stale{color:#8a1c1c;font-weight:bold}
.reason{font-family:monospace;font-size:.85em;color:#555;white-space:pre-wrap}
.detail td:nth-child(1){width:13em}.detail td:nth-child(2){width:6em}.detail td:nth-child(6){width:9em}
summary{cursor:pointer}
</style>
</head>
<body>
<h1>anysqs compatibility</h1>
<p>Generated by <code>anysqs report</code> from conformance runs: first how each backend runs and what its report was verified against, then where the backends' SQS capabilities differ.</p>
<h2>How each backend runs</h2>
<p>As each driver declares it, beside its capabilities; the backend guides say more (<a href="../backends/README.md">Choosing a backend</a>, docs/backends/README.md).
The evidence rows say what the conformance cases ran against and when.</p>
<table>
<tr><th class="prop">Backend</th>{{range .Backends}}<th><a href="#{{.Backend}}">{{.Backend}}</a></th>{{end}}</tr>
<tr><th>result</th>{{range .Backends}}<td><span class="{{.Result}}">{{.Result}}</span></td>{{end}}</tr>
<tr><th>verified against</th>{{range .Backends}}<td>{{or .Run.Target "unknown"}}</td>{{end}}</tr>
<tr><th>evidence</th>{{range .Backends}}<td>run {{or (day .Date) "unknown"}}, commit <code>{{short .Commit}}</code>{{with .Stale}}<br><span class="stale">{{.}}</span>{{end}}</td>{{end}}</tr>
{{range .Operations}}<tr><th>{{.Title}}</th>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{with .Reference}}<p>Reference run against AWS SQS: <a href="#{{.Backend}}">{{.Backend}}</a>, {{or .Date "unknown"}}, commit <code>{{short .Commit}}</code>: {{.Totals.Pass}} of {{.Totals.Cases}} cases passed.</p>
{{else}}<p>No run against AWS SQS is recorded: the suite's expectations come from the SQS API reference and the SDKs' service models, unconfirmed against the service.
To record one: <code>ANYSQS_CONFORMANCE_ENDPOINT=https://sqs.&lt;region&gt;.amazonaws.com</code> with AWS credentials in the environment, then <code>make report BACKENDS=aws-sqs</code> (see docs/development.md).</p>
{{end}}
<h2>Where the capabilities differ</h2>
<p>Each cell gives the level a backend declares for an SQS
capability and what its conformance cases showed, in words; a colour only repeats it. Click a cell for the cases.
Levels: <b>native</b> (what SQS does), <b>emulated</b> (rebuilt exactly by the driver), <b>degraded</b> (a documented
fallback, described in the cell; responses carry <code>X-Anysqs-Degraded</code>; <code>policy: strict</code> rejects it),
<b>unsupported</b> (rejected with an SQS error, nothing changes).</p>
<p>Capabilities on which the backends' cells differ, or that some backend does not give natively or unchecked.
{{len .Same}} more are native and confirmed on every backend: listed after this table.</p>
<table>
<tr><th class="cap">Capability</th>{{range .Backends}}<th><a href="#{{.Backend}}">{{.Backend}}</a></th>{{end}}</tr>
<tr><th>queue time kept by</th>{{range .Backends}}<td>{{clock .Run.Clock}}</td>{{end}}</tr>
<tr><th>receipt handles hold</th>{{range .Backends}}<td>{{scope .Run.ReceiptScope}}</td>{{end}}</tr>
{{range .Differ}}{{template "row" .}}{{else}}<tr><td colspan="{{len $.Backends | inc}}">None: every capability is native and confirmed on every backend.</td></tr>
{{end}}</table>
{{if .Same}}<details><summary>Native and confirmed on every backend ({{len .Same}} capabilities)</summary>
<table>
<tr><th class="cap">Capability</th>{{range .Backends}}<th>{{.Backend}}</th>{{end}}</tr>
{{range .Same}}{{template "row" .}}{{end}}</table>
</details>{{end}}
{{range .Backends}}{{template "section" .}}{{end}}{{if .Profiles}}
<h2>Test rows, not backends of their own</h2>
<p>Driver profiles built to test the suite and the gateway, and backends run another way (through the plugin boundary, say): reported and checked like a backend, kept out of the matrix.</p>
{{range .Profiles}}{{template "section" .}}{{end}}{{end}}{{with .Reference}}
<h2>Reference run against AWS SQS</h2>
<p>The suite run against the service itself, every capability declared native: a case that passed here confirms its expectation, and the backends' reports mark it.</p>
{{template "section" .}}{{end}}
</body>
</html>
{{- define "section"}}{{$b := .Backend}}
<h2 id="{{$b}}">{{$b}}: <span class="{{.Result}}">{{.Result}}</span></h2>
<p>{{with .Stale}}<span class="stale">{{.}}: regenerate it with <code>make report</code>.</span><br>{{end}}Driver {{or .DriverVersion "unknown"}}, service {{or .ServiceVersion "unknown"}}, run {{or .Date "unknown"}} at commit <code>{{or .Commit "unknown"}}</code>.
Cases: {{.Totals.Pass}} passed, {{.Totals.Fail}} failed, {{.Totals.NotRun}} not run{{if .Run.RealClockBudget}}, {{.Totals.NeedsGatewayClock}} needing a gateway clock{{end}}.<br>
Target: {{or .Run.Target "unknown"}}; clock: {{or .Run.Clock "unknown"}}{{if .Run.RealClockBudget}} (every case ran on a real clock, waiting up to {{.Run.RealClockBudget}}){{end}}; receipt scope: {{or .Run.ReceiptScope "unknown"}}.{{with .Confirmation}}<br>
{{.}}{{end}}</p>
{{if .Failures}}<ul>{{range .Failures}}<li>{{.}}</li>{{end}}</ul>{{end}}
<table class="detail">
<tr><th>Capability</th><th>Level</th><th>Limits</th><th>Note</th><th>Cases must show</th><th>Verdict</th><th>Cases</th></tr>
{{range .Capabilities}}<tr id="{{anchor $b .ID}}"><td><b>{{.ID}}</b><br>{{.Title}}{{with .Reference}}<br><small>{{.}}</small>{{end}}</td><td>{{.Level}}</td><td>{{limits .Limits}}</td><td>{{.Note}}</td><td>{{.Expect}}</td><td class="{{class .}}">{{words .}}<br>{{counts .}}</td><td><details{{if failing .}} open{{end}}><summary>{{len .Cases}} cases</summary>{{range .Cases}}<div>{{.Status}} <code>{{.Case}}</code>{{with .AWSConfirmed}} (confirmed against AWS SQS {{day .}}){{end}}{{range .Reason}}<div class="reason">{{.}}</div>{{end}}</div>{{end}}</details></td></tr>
{{end}}</table>
{{end -}}
{{- define "row"}}<tr><th title="{{.Title}}">{{.ID}}<br><small>{{.Title}}</small></th>{{range .Cells}}{{if .Present}}<td class="{{.Class}}"><a href="{{.Href}}" title="{{.Title}}">{{.Text}}</a>{{with .Note}}<span class="note">{{.}}</span>{{end}}</td>{{else}}<td>not declared</td>{{end}}{{end}}</tr>
{{end -}}
`))
