package console

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/sqsclient"
)

// Console is the read-mostly web console on the admin listener (config console: true).
// It reads and acts through the SQS API of its own gateway, in process and signed with
// a configured access key, so it sees exactly what clients see and obeys the same
// capability policy. Its one action is starting a redrive.
type Console struct {
	sqs      *sqs.Client
	backends []gateway.BackendInfo
	// backendOf names the backend that holds a queue; nil with one backend.
	backendOf func(queue string) string
	users     map[string]string // access key ID → secret: HTTP Basic credentials; nil: open
	gather    prometheus.Gatherer
	build     string // the version line the page shows
	started   time.Time

	mu       sync.Mutex
	lastAt   time.Time
	lastSeen map[string]float64 // action → requests, at lastAt
}

// handlerTransport sends each request to an http.Handler in the same process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Host == "" { // a client request names its host in the URL; the signature covers it
		r = r.Clone(r.Context())
		r.Host = r.URL.Host
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

// New returns the console of the gateway gw and its backends (backendOf names each
// queue's, when there are several); users are the Basic credentials it accepts (nil:
// open), gather its metrics.
func New(gw http.Handler, backends []gateway.BackendInfo, backendOf func(string) string, users map[string]string, gather prometheus.Gatherer, region, build string) *Console {
	key, secret := "console", "console"
	ids := make([]string, 0, len(users))
	for id := range users {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if len(ids) > 0 {
		key, secret = ids[0], users[ids[0]]
	}
	client := sqs.New(sqs.Options{
		Region:       region,
		BaseEndpoint: aws.String("http://console.invalid"),
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, ""),
		HTTPClient:   &http.Client{Transport: handlerTransport{gw}},
	})
	if len(backends) < 2 {
		backendOf = nil
	}
	return &Console{sqs: client, backends: backends, backendOf: backendOf, users: users, gather: gather, build: build, started: time.Now()}
}

// Register adds the console's pages to mux, under /console.
func (c *Console) Register(mux *http.ServeMux) {
	mux.Handle("GET /console", c.auth(http.HandlerFunc(c.page)))
	mux.Handle("POST /console/redrive", c.auth(http.HandlerFunc(c.redrive)))
	mux.Handle("GET /console/queue", c.auth(http.HandlerFunc(c.queuePage)))
}

// auth asks for an access key ID and its secret (HTTP Basic) when the gateway has
// credentials: the console is behind the same keys as the API.
func (c *Console) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(c.users) > 0 {
			id, secret, ok := r.BasicAuth()
			want, known := c.users[id]
			if !ok || !known || subtle.ConstantTimeCompare([]byte(secret), []byte(want)) != 1 {
				w.Header().Set("WWW-Authenticate", `Basic realm="anysqs console: access key ID and secret"`)
				http.Error(w, "access key ID and secret required", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

type consoleQueue struct {
	Name, DLQ                  string
	Backend                    string // on a gateway of several backends
	Visible, InFlight, Delayed int
	IsDLQ                      bool     // some queue's RedrivePolicy names it
	Sources                    []string // the queues that send to it
	Task                       string   // its latest move task, e.g. "RUNNING: 3 of 10 moved"
}

type consoleRate struct {
	Action       string
	Total        float64
	PerSecond    string
	SinceSeconds int
}

type consolePage struct {
	Build          string
	Backends       []consoleBackend
	Routed         bool // several backends: the queue table names each queue's
	Queues         []consoleQueue
	Rates          []consoleRate
	Message, Error string
}

// consoleBackend is one backend's part of the page.
type consoleBackend struct {
	Name, Driver, Version, Service, Routes string
	Capabilities                           []consoleCapability
	Operations                             []consoleOperation
}

type consoleCapability struct{ ID, Level, Note string }

// consoleOperation is one of the driver's operational properties, as the report shows it.
type consoleOperation struct{ Title, Value string }

func (c *Console) page(w http.ResponseWriter, r *http.Request) {
	p := consolePage{Build: c.build, Message: r.URL.Query().Get("msg"), Routed: c.backendOf != nil}
	queues, err := c.queues(r.Context())
	if err != nil {
		p.Error = err.Error()
	}
	p.Queues = queues
	for _, b := range c.backends {
		d := b.Description
		cb := consoleBackend{Name: b.Name, Driver: d.Name, Version: d.Version, Service: d.ServiceVersion}
		routes := b.Queues
		if b.Default {
			routes = append(routes[:len(routes):len(routes)], "every other queue")
		}
		cb.Routes = strings.Join(routes, ", ")
		for _, c := range d.Capabilities {
			cb.Capabilities = append(cb.Capabilities, consoleCapability{string(c.ID), string(c.Level), c.Note})
		}
		for _, prop := range capabilities.OperationalProperties() {
			v := prop.Value(d.Operations)
			if v == "" {
				v = "not declared by the driver"
			}
			cb.Operations = append(cb.Operations, consoleOperation{prop.Title, v})
		}
		p.Backends = append(p.Backends, cb)
	}
	p.Rates = c.rates()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	if err := consoleTemplate.Execute(w, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// queues lists every queue with its counts, its DLQ, and for DLQs their sources and
// latest move task.
func (c *Console) queues(ctx context.Context) ([]consoleQueue, error) {
	var out []consoleQueue
	byARN := map[string]int{}
	for p := sqs.NewListQueuesPaginator(c.sqs, &sqs.ListQueuesInput{MaxResults: aws.Int32(1000)}); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return out, fmt.Errorf("ListQueues: %w", err)
		}
		for _, u := range page.QueueUrls {
			a, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u),
				AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
			if err != nil {
				return out, fmt.Errorf("queue %s: %w", sqsclient.QueueName(u), err)
			}
			q := consoleQueue{Name: sqsclient.QueueName(u)}
			if c.backendOf != nil {
				q.Backend = c.backendOf(q.Name)
			}
			q.Visible, _ = strconv.Atoi(a.Attributes["ApproximateNumberOfMessages"])
			q.InFlight, _ = strconv.Atoi(a.Attributes["ApproximateNumberOfMessagesNotVisible"])
			q.Delayed, _ = strconv.Atoi(a.Attributes["ApproximateNumberOfMessagesDelayed"])
			if rp := a.Attributes["RedrivePolicy"]; rp != "" {
				var pol struct {
					Target string `json:"deadLetterTargetArn"`
				}
				if json.Unmarshal([]byte(rp), &pol) == nil {
					q.DLQ = pol.Target
				}
			}
			byARN[a.Attributes["QueueArn"]] = len(out)
			out = append(out, q)
		}
	}
	for i := range out {
		if j, ok := byARN[out[i].DLQ]; ok {
			out[j].IsDLQ = true
			out[j].Sources = append(out[j].Sources, out[i].Name)
			out[i].DLQ = out[j].Name
		} else if out[i].DLQ != "" {
			out[i].DLQ = sqsclient.ARNName(out[i].DLQ) + " (missing)"
		}
	}
	for arn, j := range byARN {
		if !out[j].IsDLQ {
			continue
		}
		tasks, err := c.sqs.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(arn), MaxResults: aws.Int32(1)})
		if err != nil {
			out[j].Task = "move tasks unavailable: " + sqsclient.Err(out[j].Name, err).Error()
			continue
		}
		if len(tasks.Results) > 0 {
			t := tasks.Results[0]
			out[j].Task = fmt.Sprintf("%s: %d moved", aws.ToString(t.Status), t.ApproximateNumberOfMessagesMoved)
		}
	}
	return out, nil
}

// rates reports requests per action since the previous view (or since start).
func (c *Console) rates() []consoleRate {
	mfs, err := c.gather.Gather()
	if err != nil {
		return nil
	}
	now := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "anysqs_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "action" {
					now[l.GetValue()] += m.GetCounter().GetValue()
				}
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	since, prev := c.lastAt, c.lastSeen
	if since.IsZero() {
		since, prev = c.started, map[string]float64{}
	}
	at := time.Now()
	secs := at.Sub(since).Seconds()
	var out []consoleRate
	for action, n := range now {
		if n == 0 {
			continue
		}
		out = append(out, consoleRate{Action: action, Total: n,
			PerSecond: strconv.FormatFloat((n-prev[action])/max(secs, 1e-3), 'f', 2, 64), SinceSeconds: int(secs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Action < out[j].Action })
	c.lastAt, c.lastSeen = at, now
	return out
}

// redrive starts a move task out of a DLQ, back to each message's source queue.
func (c *Console) redrive(w http.ResponseWriter, r *http.Request) {
	// A form post from another site must not start one (no CSRF through a logged-in browser).
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host && o != "https://"+r.Host {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	name := r.FormValue("queue")
	msg, err := c.startRedrive(r.Context(), name)
	if err != nil {
		msg = "redrive refused: " + err.Error()
	}
	http.Redirect(w, r, "/console?msg="+url.QueryEscape(msg), http.StatusSeeOther)
}

func (c *Console) startRedrive(ctx context.Context, name string) (string, error) {
	u, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", sqsclient.Err(name, err)
	}
	a, err := c.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: u.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", sqsclient.Err(name, err)
	}
	if _, err := c.sqs.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(a.Attributes["QueueArn"])}); err != nil {
		return "", sqsclient.Err(name, err)
	}
	return "started a redrive of " + name + " back to its source queues", nil
}

var consoleTemplate = template.Must(template.New("console").Funcs(template.FuncMap{
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>anysqs console: {{range $i, $b := .Backends}}{{if $i}}, {{end}}{{$b.Driver}}{{end}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1240px;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}th,td{border:1px solid #bbb;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4}table.ops th{width:12em}td.n{text-align:right;font-variant-numeric:tabular-nums}
.msg{background:#eef6ee;border:1px solid #9c9;padding:.5em}.err{background:#fbeaea;border:1px solid #c99;padding:.5em}
.native{}.degraded{background:#fff4c2}.unsupported{background:#dde4f7}.emulated{}
</style></head><body>
<h1>anysqs console</h1>
<p>{{if .Routed}}Backends {{range $i, $b := .Backends}}{{if $i}}, {{end}}<b>{{$b.Name}}</b> ({{$b.Driver}} driver {{$b.Version}}, service {{or $b.Service "unknown"}}; {{$b.Routes}}){{end}}{{else}}{{with index .Backends 0}}Backend <b>{{.Driver}}</b> (driver {{.Version}}, service {{or .Service "unknown"}}){{end}}{{end}} · {{.Build}} · read-only except for redrive.
<a href="/console">Refresh</a>.</p>
{{with .Message}}<p class="msg">{{.}}</p>{{end}}{{with .Error}}<p class="err">{{.}}</p>{{end}}
<h2>Queues</h2>
<table><tr><th>Queue</th>{{if .Routed}}<th>Backend</th>{{end}}<th>Visible</th><th>In flight</th><th>Delayed</th><th>Dead-letter queue</th><th>Dead-letter queue of</th><th>Redrive</th></tr>
{{range .Queues}}<tr><td><a href="/console/queue?name={{.Name}}">{{.Name}}</a></td>{{if .Backend}}<td>{{.Backend}}</td>{{end}}<td class="n">{{.Visible}}</td><td class="n">{{.InFlight}}</td><td class="n">{{.Delayed}}</td><td>{{or .DLQ "none"}}</td><td>{{join .Sources}}</td>
<td>{{if .IsDLQ}}<form method="post" action="/console/redrive"><input type="hidden" name="queue" value="{{.Name}}"><button{{if not .Visible}} disabled{{end}}>Redrive {{.Visible}} to {{join .Sources}}</button></form>{{with .Task}} last task: {{.}}{{end}}{{end}}</td></tr>
{{else}}<tr><td colspan="8">No queues.</td></tr>{{end}}</table>
<h2>Requests</h2>
<table><tr><th>Action</th><th>Total</th><th>Per second since the previous view</th></tr>
{{range .Rates}}<tr><td>{{.Action}}</td><td class="n">{{.Total}}</td><td class="n">{{.PerSecond}} (over {{.SinceSeconds}} s)</td></tr>
{{else}}<tr><td colspan="3">No requests yet.</td></tr>{{end}}</table>
{{$routed := .Routed}}{{range .Backends}}
<h2>How {{if $routed}}backend {{.Name}} ({{.Driver}}){{else}}{{.Driver}}{{end}} runs</h2>
<table class="ops">{{range .Operations}}<tr><th>{{.Title}}</th><td>{{.Value}}</td></tr>{{end}}</table>
<h2>Capabilities of {{if $routed}}backend {{.Name}} ({{.Driver}}){{else}}{{.Driver}}{{end}}</h2>
<p>As the driver declares them; the evidence for each is in docs/compat/{{.Driver}}.md.</p>
<table><tr><th>Capability</th><th>Level</th><th>Note</th></tr>
{{range .Capabilities}}<tr class="{{.Level}}"><td>{{.ID}}</td><td>{{.Level}}</td><td>{{.Note}}</td></tr>{{end}}</table>
{{end}}
</body></html>
`))
