package main

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
)

// startConsoleGateway runs serve with the console on, auth on and SQLite on disk (the
// configuration docs/compat/sqlite.json was made with), and returns the API and admin URLs.
func startConsoleGateway(t *testing.T) (api, admin string) {
	t.Helper()
	api, admin = serveT(t, t.TempDir(), "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nconsole: true\nbackend:\n  name: sqlite\n  options:\n    data_dir: ./data\n"+
		"auth:\n  credentials:\n    - {access_key_id: AKIAMQTEST, secret_access_key: mq-secret}\n")
	return "http://" + api, "http://" + admin
}

func TestConsole(t *testing.T) {
	api, admin := startConsoleGateway(t)
	c := mqCLI{t, api}
	getPath := func(path, user, pass string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, admin+path, nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get := func(user, pass string) (int, string) { return getPath("/console", user, pass) }
	// Behind the gateway's credentials.
	if st, _ := get("", ""); st != http.StatusUnauthorized {
		t.Fatalf("no credentials: %d", st)
	}
	if st, _ := get("AKIAMQTEST", "wrong"); st != http.StatusUnauthorized {
		t.Fatalf("wrong secret: %d", st)
	}

	// Three messages exceed --max-receives 1 and land in the DLQ.
	c.ok("create", "-q", "orders", "--dlq", "orders-dlq", "--max-receives", "1", "--attr", "VisibilityTimeout=1")
	for _, b := range []string{"m1", "m2", "m3"} {
		c.ok("send", "-q", "orders", "--body", b)
	}
	c.ok("send", "-q", "orders", "--body", "later", "--delay", "900")
	var r received
	c.json(&r, "receive", "-q", "orders", "-m", "10", "-w", "5")
	var dlq struct {
		Count int `json:"approximate_message_count"`
	}
	for i := 0; dlq.Count < 3; i++ {
		if i == 10 {
			t.Fatalf("the messages did not reach the DLQ: %+v", dlq)
		}
		c.json(&r, "receive", "-q", "orders", "-m", "10", "-w", "2")
		c.json(&dlq, "dlq", "-q", "orders", "--sample", "0")
	}

	st, page := get("AKIAMQTEST", "mq-secret")
	if st != http.StatusOK {
		t.Fatalf("console: %d\n%s", st, page)
	}
	for _, want := range []string{
		`<td><a href="/console/queue?name=orders">orders</a></td><td class="n">0</td><td class="n">0</td><td class="n">1</td><td>orders-dlq</td>`,
		`<td><a href="/console/queue?name=orders-dlq">orders-dlq</a></td><td class="n">3</td>`,
		`Redrive 3 to orders</button>`,
		`<td>ReceiveMessage</td>`,
		"Backend <b>sqlite</b>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("console lacks %q", want)
		}
	}

	// Its matrix is the driver's declarations, the same as the committed report's.
	raw, err := os.ReadFile("../../docs/compat/sqlite.json")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Capabilities []struct{ ID, Level string }
		Operations   *capabilities.Operations
	}
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	// So are the operational properties, shown in the same words.
	if rep.Operations == nil {
		t.Errorf("docs/compat/sqlite.json has no operational properties: regenerate it (make report)")
	} else {
		for _, prop := range capabilities.OperationalProperties() {
			if want := "<tr><th>" + prop.Title + "</th><td>" + html.EscapeString(prop.Value(*rep.Operations)) + "</td></tr>"; !strings.Contains(page, want) {
				t.Errorf("console lacks %s as docs/compat/sqlite.json says it: %q", prop.Key, want)
			}
		}
	}
	shown := map[string]string{}
	for _, m := range regexp.MustCompile(`<tr class="\w+"><td>([^<]+)</td><td>(\w+)</td>`).FindAllStringSubmatch(page, -1) {
		shown[m[1]] = m[2]
	}
	if len(shown) != len(rep.Capabilities) {
		t.Errorf("console shows %d capabilities, docs/compat/sqlite.json has %d", len(shown), len(rep.Capabilities))
	}
	for _, cp := range rep.Capabilities {
		if shown[cp.ID] != cp.Level {
			t.Errorf("%s: console %q, docs/compat %q", cp.ID, shown[cp.ID], cp.Level)
		}
	}

	// The DLQ's page lists its messages, a page at a time, without receiving them.
	if st, _ := getPath("/console/queue?name=orders-dlq", "", ""); st != http.StatusUnauthorized {
		t.Fatalf("queue page without credentials: %d", st)
	}
	for range 2 { // twice: the first listing changed nothing the second could see
		st, qp := getPath("/console/queue?name=orders-dlq", "AKIAMQTEST", "mq-secret")
		rows := regexp.MustCompile(`<tr class="visible"><td class="id">[^<]+</td><td>visible</td><td class="n">1</td>`).FindAllString(qp, -1)
		if st != http.StatusOK || len(rows) != 3 {
			t.Fatalf("queue page of orders-dlq: %d, %d visible messages received once, want 3:\n%s", st, len(rows), qp)
		}
		for _, b := range []string{"<pre>m1</pre>", "<pre>m2</pre>", "<pre>m3</pre>"} {
			if !strings.Contains(qp, b) {
				t.Fatalf("queue page lacks %s:\n%s", b, qp)
			}
		}
	}
	if _, qp := getPath("/console/queue?name=orders", "AKIAMQTEST", "mq-secret"); !strings.Contains(qp, `<td>delayed<br>until `) {
		t.Fatalf("queue page of orders does not show the delayed message:\n%s", qp)
	}

	post := func(origin string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, admin+"/console/redrive", strings.NewReader(url.Values{"queue": {"orders-dlq"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("AKIAMQTEST", "mq-secret")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("http://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin redrive: %d", resp.StatusCode)
	}
	resp := post(admin)
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "started+a+redrive") {
		t.Fatalf("redrive: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// The redrive moves the messages: all three come back to orders.
	got := map[string]bool{}
	for i := 0; len(got) < 3; i++ {
		if i == 10 {
			t.Fatalf("after the console's redrive, orders received only %v", got)
		}
		c.json(&r, "receive", "-q", "orders", "-m", "10", "-w", "5", "--visibility", "300")
		for _, m := range r.Messages {
			got[m.Body] = true
		}
	}
	if !got["m1"] || !got["m2"] || !got["m3"] {
		t.Fatalf("redriven messages %v", got)
	}
	if _, page = get("AKIAMQTEST", "mq-secret"); !strings.Contains(page, "last task: COMPLETED: 3 moved") {
		t.Errorf("the console does not show the completed task:\n%s", page)
	}
}

// TestRoutedGatewayShowsEachBackend: a gateway of two backends lists both, with their
// routes, on /capabilities and in the console, and the console names each queue's.
func TestRoutedGatewayShowsEachBackend(t *testing.T) {
	api, admin := serveT(t, t.TempDir(), "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nconsole: true\n"+
		"backends:\n  cold: {name: sqlite, options: {data_dir: ./cold}}\n  hot: {name: sqlite, options: {data_dir: ./hot}}\n"+
		"routes:\n  - {queues: \"hot-*\", backend: hot}\n  - {backend: cold}\n")
	c := mqCLI{t, "http://" + api}
	c.ok("create", "-q", "hot-orders")
	c.ok("create", "-q", "audit")

	get := func(path string) string {
		resp, err := http.Get("http://" + admin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	var listed struct {
		Backends []struct {
			Name        string
			Queues      []string
			Default     bool
			Description struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(get("/capabilities")), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Backends) != 2 || listed.Backends[0].Name != "cold" || listed.Backends[1].Name != "hot" ||
		len(listed.Backends[0].Queues) != 0 || !listed.Backends[0].Default ||
		strings.Join(listed.Backends[1].Queues, ",") != "hot-*" || listed.Backends[1].Default || listed.Backends[1].Description.Name != "sqlite" {
		t.Fatalf("/capabilities: %+v", listed)
	}
	var one struct{ Name string }
	if err := json.Unmarshal([]byte(get("/capabilities?backend=hot")), &one); err != nil || one.Name != "sqlite" {
		t.Fatalf("/capabilities?backend=hot: %+v, %v", one, err)
	}

	page := get("/console")
	for _, want := range []string{
		`<a href="/console/queue?name=audit">audit</a></td><td>cold</td>`,
		`<a href="/console/queue?name=hot-orders">hot-orders</a></td><td>hot</td>`,
		"Capabilities of backend cold (sqlite)", "Capabilities of backend hot (sqlite)",
		"<b>hot</b> (sqlite driver",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("console lacks %q", want)
		}
	}
}
