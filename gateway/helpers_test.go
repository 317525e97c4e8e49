package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqlite"
	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// start is the fake clock's start; fixed so that golden files are stable.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type env struct {
	t     testing.TB
	gw    *gateway.Server
	http  *httptest.Server
	clock *clock.Fake
	waits chan string // one value per long poll that starts waiting
}

func newEnv(t testing.TB) *env { return newEnvOn(t, nil) }

// hangGuard bounds a wait for an event the test has already caused: it comes within
// milliseconds, and only a broken gateway leaves a wait this long, which then fails
// saying what never happened instead of hanging until go test's timeout.
const hangGuard = time.Minute

// awaitEvent returns the next value on ch, failing the test if none comes within
// hangGuard. It bounds a hang; it asserts nothing about how long anything took.
func awaitEvent[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
	}
	t.Fatalf("%s: nothing within %v", what, hangGuard)
	var zero T
	return zero
}

// memDriver opens an in-memory SQLite driver, closed when the test ends.
func memDriver(t testing.TB) *sqlite.Driver {
	t.Helper()
	d, err := sqlite.Open(context.Background(), sqlite.Options{DataDir: sqlite.MemoryDataDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// newEnvOn is newEnv with its in-memory SQLite driver wrapped by wrap (nil: used as is),
// for tests that give the gateway a driver with other behaviour.
func newEnvOn(t testing.TB, wrap func(inner drivers.Driver) drivers.Driver) *env {
	t.Helper()
	ctx := context.Background()
	inner := memDriver(t)
	var d drivers.Driver = inner
	if wrap != nil {
		d = wrap(inner)
	}
	clk := clock.NewFake(start)
	gw, err := gateway.New(ctx, gateway.Config{Driver: d, Clock: clk, PublicURL: "http://sqs.test"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, gw: gw, clock: clk, waits: make(chan string, 100)}
	gateway.SetOnWait(gw, func(q string) { e.waits <- q })
	e.http = httptest.NewServer(gw)
	t.Cleanup(func() {
		e.http.Close()
		_ = gw.Close()
	})
	return e
}

// jsonCall sends one AWS JSON 1.0 request and returns status, headers and body.
func (e *env) jsonCall(action, body string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+"/", strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	return e.do(req)
}

// queryCall sends one Query request as a POST form to path.
func (e *env) queryCall(path string, form url.Values) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	return e.do(req)
}

func (e *env) do(req *http.Request) (int, http.Header, string) {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}
