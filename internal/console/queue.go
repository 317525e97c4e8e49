package console

import (
	"context"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/internal/sqsclient"
)

// consolePageSize is how many messages one page of the console's queue view lists.
const consolePageSize = 25

type consoleMessage struct {
	ID, State, VisibleAt, Sent, Group, Body string
	Receives                                string
	Attributes                              []string // "name=value", sorted
	Truncated                               bool
}

type consoleQueuePage struct {
	Queue, After, Next, Error string
	Messages                  []consoleMessage
}

// queuePage lists a queue's messages with AnysqsPeekMessages, a page at a time: what a
// dead-letter queue holds, without receiving (and so without changing) any of it.
func (c *Console) queuePage(w http.ResponseWriter, r *http.Request) {
	p := consoleQueuePage{Queue: r.URL.Query().Get("name"), After: r.URL.Query().Get("after")}
	msgs, next, err := c.peek(r.Context(), p.Queue, p.After)
	if err != nil {
		p.Error = err.Error()
	}
	p.Messages, p.Next = msgs, next
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := consoleQueueTemplate.Execute(w, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

func (c *Console) peek(ctx context.Context, name, after string) ([]consoleMessage, string, error) {
	u, err := c.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return nil, "", sqsclient.Err(name, err)
	}
	var out struct {
		Messages []struct {
			MessageId, Body, State, VisibleTimestamp string
			Attributes                               map[string]string
			MessageAttributes                        map[string]struct{ DataType, StringValue string }
		}
		NextToken string
	}
	in := map[string]any{"QueueUrl": aws.ToString(u.QueueUrl), "MaxNumberOfMessages": consolePageSize}
	if after != "" {
		in["NextToken"] = after
	}
	if err := sqsclient.CallExtension(ctx, c.sqs, "AnysqsPeekMessages", in, &out); err != nil {
		return nil, "", sqsclient.Err(name, err)
	}
	stamp := func(ms string) string {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return ""
		}
		return time.UnixMilli(n).UTC().Format("2006-01-02 15:04:05")
	}
	var msgs []consoleMessage
	for _, m := range out.Messages {
		cm := consoleMessage{ID: m.MessageId, State: m.State, VisibleAt: stamp(m.VisibleTimestamp),
			Sent: stamp(m.Attributes["SentTimestamp"]), Group: m.Attributes["MessageGroupId"],
			Receives: m.Attributes["ApproximateReceiveCount"], Body: m.Body}
		if len(cm.Body) > 500 {
			cm.Body, cm.Truncated = cm.Body[:500], true
		}
		for k, v := range m.MessageAttributes {
			val := v.StringValue
			if strings.HasPrefix(v.DataType, "Binary") {
				val = "(binary)"
			}
			cm.Attributes = append(cm.Attributes, k+"="+val)
		}
		sort.Strings(cm.Attributes)
		msgs = append(msgs, cm)
	}
	return msgs, out.NextToken, nil
}

var consoleQueueTemplate = template.Must(template.New("queue").Funcs(template.FuncMap{
	"join": func(s []string) string { return strings.Join(s, ", ") },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>anysqs console: {{.Queue}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1240px;padding:0 1em;color:#222}
table{border-collapse:collapse;width:100%;margin:.5em 0 1.5em}th,td{border:1px solid #bbb;padding:.3em .5em;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.n{text-align:right}pre{margin:0;white-space:pre-wrap;word-break:break-all;font-size:.9em}
td.id{font-size:.85em}td.body{width:40%}
.err{background:#fbeaea;border:1px solid #c99;padding:.5em}.in-flight{background:#fff4c2}.delayed{background:#dde4f7}
</style></head><body>
<h1>Queue {{.Queue}}</h1>
<p><a href="/console">All queues</a> · messages as stored, listed without receiving them: no receive count or visibility changes.
{{if .After}}<a href="/console/queue?name={{.Queue}}">First page</a>{{end}}</p>
{{with .Error}}<p class="err">{{.}}</p>{{end}}
<table><tr><th>Message ID</th><th>State</th><th>Receives</th><th>Sent (UTC)</th><th>Group</th><th>Attributes</th><th>Body</th></tr>
{{range .Messages}}<tr class="{{.State}}"><td class="id">{{.ID}}</td><td>{{.State}}{{with .VisibleAt}}<br>until {{.}}{{end}}</td><td class="n">{{.Receives}}</td><td>{{.Sent}}</td><td>{{.Group}}</td><td>{{join .Attributes}}</td><td class="body"><pre>{{.Body}}{{if .Truncated}} …{{end}}</pre></td></tr>
{{else}}<tr><td colspan="7">No messages{{if .After}} after this point{{end}}.</td></tr>{{end}}</table>
{{with .Next}}<p><a id="next" href="/console/queue?name={{$.Queue}}&amp;after={{.}}">Next page</a></p>{{end}}
</body></html>
`))
