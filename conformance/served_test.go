package conformance

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

// servedRow judges backend as users run it: each case starts `anysqs serve --config
// configs/<file>.yaml`, the shipped configuration, as a process of its own, pointed at
// this machine's service and the case's fresh storage by environment variables only
// (internal/servetest). Expectations follow what that process declares on its admin
// listener's /capabilities. The process keeps its own real clock, so cases wait in real
// time within realClockBudget, and a restart is the process stopped and started again on
// the same storage. Its cells repeat the in-process row's, so the row is test-only: its
// report is generated and checked, and the matrix lists each backend once.
func servedRow(name, config string, target func(string) string, timeout time.Duration) backend {
	return backend{name: name + "-served", parallel: true, timeout: timeout, testOnly: true, served: true,
		target: func(v string) string {
			return "anysqs serve --config configs/" + config + ".yaml (this build, a process per case) on " + target(v)
		},
		prepare: func(t *testing.T) storage { return storage{serve: serve(t, name)} }}
}

// servedRows are the served rows: one per backend of internal/testbed, and the plugin
// boundary's (the served binary as the plugin, over SQLite).
func servedRows() []backend {
	var rows []backend
	for _, b := range testbed.All {
		rows = append(rows, servedRow(b.Name, b.Config, b.Target, 10*time.Minute))
	}
	sqlite := testbed.All[0]
	rows = append(rows, servedRow("plugin", "plugin", func(v string) string {
		return sqlite.Target(v) + ", run as a plugin: anysqs driver serve " + sqlite.Name
	}, 10*time.Minute))
	routed := servedRow(testbed.Routed, testbed.Routed, testbed.RoutedTarget, 10*time.Minute)
	routed.service = testbed.RoutedService
	return append(rows, routed)
}

// servedGateway is a served row's process: the anysqs binary from the shipped
// configuration of backend.
type servedGateway struct {
	t       *testing.T
	g       *servetest.Gateway
	backend testbed.Backend
}

func (s servedGateway) AdminURL() string { return s.g.AdminURL }

func (s servedGateway) Restart() {
	s.t.Helper()
	if s.backend.InProcessServed {
		// Not the service's behaviour but its model's: it lives in the gateway process.
		s.t.Skipf("not run when served: the %s model lives in the gateway process, "+
			"so a process restart empties it; the in-process %s row runs this case", s.backend.Name, s.backend.Name)
	}
	s.g.Restart()
}

// serve serves the case's backend from its shipped configuration, with the suite's
// credentials and account, and reads what it declares.
func serve(t *testing.T, name string) func(h *H, maxInFlight int64) servedProcess {
	return func(h *H, maxInFlight int64) servedProcess {
		t.Helper()
		b, _ := testbed.Named(name)
		env := append(testbed.Env(t, name),
			"ANYSQS_ACCOUNT_ID="+testAccount, "ANYSQS_REGION="+testRegion,
			"ANYSQS_AUTH_CREDENTIALS="+testAccessKey+":"+testSecretKey)
		if maxInFlight != 0 {
			env = append(env, "ANYSQS_LIMITS_MAX_IN_FLIGHT="+strconv.FormatInt(maxInFlight, 10))
		}
		g := servetest.Start(t, testbed.ConfigOf(name), env...)
		h.URL = g.URL
		if name == testbed.Routed {
			h.Desc = routedDescription(t, g)
		} else {
			h.Desc = servedDescription(t, g, "")
		}
		return servedGateway{t: t, g: g, backend: b}
	}
}

// routedDescription is what the routed row's cases are judged by: the declarations of
// its default backend, which must be those of every backend it routes to, or a verdict
// would judge some queues by another backend's declarations.
func routedDescription(t *testing.T, g *servetest.Gateway) drivers.Description {
	t.Helper()
	local, main := servedDescription(t, g, "local"), servedDescription(t, g, "main")
	levels := func(d drivers.Description) map[string]string {
		m := map[string]string{}
		for _, c := range d.Capabilities {
			limits, _ := json.Marshal(c.Limits)
			m[string(c.ID)] = string(c.Level) + " " + string(limits)
		}
		return m
	}
	if l, m := levels(local), levels(main); !reflect.DeepEqual(l, m) {
		t.Fatalf("the routed row judges every queue by one backend's declarations, but %s and %s declare different levels or limits", local.Name, main.Name)
	}
	return local
}

// servedDescription reads the served gateway's GET /capabilities, of the named backend
// of a routed gateway ("" for an unrouted one).
func servedDescription(t *testing.T, g *servetest.Gateway, backend string) drivers.Description {
	t.Helper()
	u := g.AdminURL + "/capabilities"
	if backend != "" {
		u += "?backend=" + backend
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatalf("GET /capabilities: %v", err)
	}
	defer resp.Body.Close()
	var d drivers.Description
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /capabilities: %s, %v", resp.Status, err)
	}
	return d
}
