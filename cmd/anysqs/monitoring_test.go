package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"gopkg.in/yaml.v3"

	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
	"github.com/anysqs/anysqs/internal/testenv"
)

const monitoringDir = "../../deploy/monitoring"

// dashboard is the part of Grafana's dashboard JSON model the file uses; any other field
// fails the strict decode. Panel options and field configs are free-form per panel type.
type dashboard struct {
	Title                string                    `json:"title"`
	UID                  string                    `json:"uid"`
	Description          string                    `json:"description"`
	Tags                 []string                  `json:"tags"`
	Timezone             string                    `json:"timezone"`
	Editable             bool                      `json:"editable"`
	GraphTooltip         int                       `json:"graphTooltip"`
	SchemaVersion        int                       `json:"schemaVersion"`
	Version              int                       `json:"version"`
	Time                 struct{ From, To string } `json:"time"`
	Refresh              string                    `json:"refresh"`
	FiscalYearStartMonth int                       `json:"fiscalYearStartMonth"`
	LiveNow              bool                      `json:"liveNow"`
	Links                []any                     `json:"links"`
	Annotations          struct {
		List []any `json:"list"`
	} `json:"annotations"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Label      string          `json:"label"`
			Type       string          `json:"type"`
			Datasource *datasourceRef  `json:"datasource"`
			Query      any             `json:"query"`
			Definition string          `json:"definition"`
			Refresh    int             `json:"refresh"`
			Multi      bool            `json:"multi"`
			IncludeAll bool            `json:"includeAll"`
			AllValue   string          `json:"allValue"`
			Regex      string          `json:"regex"`
			Sort       int             `json:"sort"`
			Current    json.RawMessage `json:"current"`
			Hide       int             `json:"hide"`
			Options    []any           `json:"options"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID          int            `json:"id"`
		Type        string         `json:"type"`
		Title       string         `json:"title"`
		Description string         `json:"description"`
		Datasource  *datasourceRef `json:"datasource"`
		GridPos     struct {
			X int `json:"x"`
			Y int `json:"y"`
			W int `json:"w"`
			H int `json:"h"`
		} `json:"gridPos"`
		FieldConfig json.RawMessage `json:"fieldConfig"`
		Options     json.RawMessage `json:"options"`
		Collapsed   bool            `json:"collapsed"`
		Panels      []any           `json:"panels"`
		Targets     []struct {
			RefID        string         `json:"refId"`
			Datasource   *datasourceRef `json:"datasource"`
			Expr         string         `json:"expr"`
			LegendFormat string         `json:"legendFormat"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasourceRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// TestMonitoringFiles checks deploy/monitoring as Prometheus and Grafana would read it:
//   - the alert rules pass promtool check rules, and their unit tests (alerts_test.yaml)
//     fire each alert on the series that should fire it;
//   - the dashboard decodes strictly, every panel queries the dashboard's data source,
//     and its queries are valid PromQL (promtool checks them as recording rules);
//   - every anysqs_* series either names is one a served gateway exports;
//   - the Helm chart's copies (deploy/helm/anysqs/files) equal the files.
func TestMonitoringFiles(t *testing.T) {
	rules := filepath.Join(monitoringDir, "alerts.yaml")
	dashFile := filepath.Join(monitoringDir, "grafana-dashboard.json")
	for _, f := range []string{"alerts.yaml", "grafana-dashboard.json"} {
		a, errA := os.ReadFile(filepath.Join(monitoringDir, f))
		b, errB := os.ReadFile(filepath.Join(helmChart, "files", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s/files/%s differs from %s/%s (%v, %v): copy it over", helmChart, f, monitoringDir, f, errA, errB)
		}
	}

	raw, err := os.ReadFile(dashFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashFile, err)
	}
	var exprs []string
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d used twice", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W == 0 {
			t.Errorf("panel %q: gridPos %+v leaves the 24-column grid", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: queries nothing, or not the dashboard's ${datasource}", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	if d.SchemaVersion < 36 || d.UID == "" || len(exprs) == 0 {
		t.Errorf("dashboard: schemaVersion %d, uid %q, %d queries", d.SchemaVersion, d.UID, len(exprs))
	}

	ruleText, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	var ruleFile struct {
		Groups []struct {
			Rules []struct{ Expr string }
		}
	}
	if err := yaml.Unmarshal(ruleText, &ruleFile); err != nil {
		t.Fatal(err)
	}
	named := slices.Clone(exprs)
	for _, g := range ruleFile.Groups {
		for _, r := range g.Rules {
			named = append(named, r.Expr)
		}
	}
	exported := exportedSeries(t)
	series := regexp.MustCompile(`\banysqs_[a-z_]+`)
	for _, e := range named {
		for _, n := range series.FindAllString(e, -1) {
			if !exported[n] {
				t.Errorf("%q names %s, which the gateway does not export", e, n)
			}
		}
	}

	promtool := os.Getenv("ANYSQS_TEST_PROMTOOL")
	if promtool == "" {
		promtool, _ = exec.LookPath("promtool")
	}
	if promtool == "" {
		testenv.Unavailable(t, "promtool (scripts/test-env.sh unpacks it from Debian's prometheus package and sets $ANYSQS_TEST_PROMTOOL)")
	}
	run := func(args ...string) {
		t.Helper()
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("check", "rules", rules)
	run("test", "rules", filepath.Join(monitoringDir, "alerts_test.yaml"))
	// The dashboard's queries as recording rules, with Grafana's variables filled in.
	vars := strings.NewReplacer("$__rate_interval", "5m", "$account", ".*", "$queue", ".*", "$dlq", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range exprs {
		q, _ := json.Marshal(vars.Replace(e))
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, q)
	}
	asRules := filepath.Join(t.TempDir(), "dashboard-queries.yaml")
	if err := os.WriteFile(asRules, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	run("check", "rules", asRules)
}

// exportedSeries serves the embedded default with per-queue metrics collected every
// second, puts a message through a queue, and returns the names of the series /metrics
// then shows (a histogram's with their _bucket, _sum and _count).
func exportedSeries(t *testing.T) map[string]bool {
	t.Helper()
	backend := testbed.All[0].Name
	config := declaredConfig(t, t.TempDir(), backend, "\nqueue_metrics: {interval: 1s}\n")
	g := servetest.Start(t, config, testbed.Env(t, backend)...)
	ctx := context.Background()
	c := sdkClient(g.URL)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("monitored")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	awaitMetric(t, g.AdminURL, `anysqs_queue_messages_visible{account="000000000000",queue="monitored"} 1`)
	resp, err := http.Get(g.AdminURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(string(text), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		if f[3] == "histogram" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f[2]+s] = true
			}
		}
	}
	return names
}
