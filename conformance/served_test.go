package conformance_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities"
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
		prepare: func(t *testing.T) storage { return storage{served: name} }}
}

// servedRows are the served rows: one per backend of internal/testbed, and the plugin
// boundary's (the served binary as the plugin, over SQLite).
func servedRows() []backend {
	var rows []backend
	for _, b := range testbed.All {
		rows = append(rows, servedRow(b.Name, b.Config, b.Target, 10*time.Minute))
	}
	sqlite := testbed.All[0]
	return append(rows, servedRow("plugin", "plugin", func(v string) string {
		return sqlite.Target(v) + ", run as a plugin: anysqs driver serve " + sqlite.Name
	}, 10*time.Minute))
}

// startServed serves the case's backend from its shipped configuration, with the
// suite's credentials and account, and reads what it declares.
func (h *H) startServed(policy capabilities.Config, maxInFlight int64) {
	h.T.Helper()
	if policy.Mode != "" || len(policy.Overrides) > 0 || len(policy.Require) > 0 {
		h.T.Fatalf("a served row runs the shipped configuration's policy, not %+v", policy)
	}
	env := append(testbed.Env(h.T, h.st.served),
		"ANYSQS_ACCOUNT_ID="+testAccount, "ANYSQS_REGION="+testRegion,
		"ANYSQS_AUTH_CREDENTIALS="+testAccessKey+":"+testSecretKey)
	if maxInFlight != 0 {
		env = append(env, "ANYSQS_LIMITS_MAX_IN_FLIGHT="+strconv.FormatInt(maxInFlight, 10))
	}
	h.served = servetest.Start(h.T, testbed.ConfigOf(h.st.served), env...)
	h.URL = h.served.URL
	h.Desc = servedDescription(h.T, h.served)
	// The process runs on its own clock, which the case cannot move.
	h.realClock = true
}

// servedDescription reads the served gateway's GET /capabilities.
func servedDescription(t *testing.T, g *servetest.Gateway) drivers.Description {
	t.Helper()
	resp, err := http.Get(g.AdminURL + "/capabilities")
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

// nextServedWait returns a channel closed once the served gateway has one more long
// poll waiting than now (its anysqs_long_polls_waiting gauge, read from /metrics). A
// long poll registers its waiter before its first receive, so a send through the same
// gateway from then on wakes it: the event NextEmptyReceive stands for.
func (h *H) nextServedWait() <-chan struct{} {
	c := make(chan struct{})
	base, err := longPollsWaiting(h.served.AdminURL)
	if err != nil {
		h.T.Fatalf("read the served gateway's metrics: %v", err)
	}
	go func() {
		defer close(c)
		guard := time.Now().Add(2 * time.Minute) // hang guard, not a bound on the gateway
		for time.Now().Before(guard) && h.Ctx.Err() == nil {
			if n, err := longPollsWaiting(h.served.AdminURL); err == nil && n > base {
				return
			}
			time.Sleep(2 * time.Millisecond) // polling the gauge: the process tells no one
		}
	}()
	return c
}

// longPollsWaiting reads anysqs_long_polls_waiting from a gateway's /metrics.
func longPollsWaiting(admin string) (int, error) {
	resp, err := http.Get(admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "anysqs_long_polls_waiting "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, os.ErrNotExist
}
