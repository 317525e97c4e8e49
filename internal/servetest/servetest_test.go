package servetest_test

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/servetest"
	"github.com/anysqs/anysqs/internal/testbed"
)

func TestMain(m *testing.M) {
	code := m.Run()
	servetest.RemoveBuild()
	os.Exit(code)
}

// TestServeShippedConfig serves configs/embedded.yaml as shipped, reads what its backend
// declares from the admin listener, and restarts it on the same address.
func TestServeShippedConfig(t *testing.T) {
	g, _ := testbed.Start(t, "sqlite")
	desc := capabilities(t, g)
	if desc.Name != "sqlite" || len(desc.Capabilities) == 0 {
		t.Fatalf("/capabilities: driver %q with %d declarations; want sqlite with its declarations", desc.Name, len(desc.Capabilities))
	}
	url := g.URL
	g.Restart()
	if g.URL != url {
		t.Fatalf("restart moved the gateway from %s to %s", url, g.URL)
	}
	if d := capabilities(t, g); d.Name != "sqlite" {
		t.Fatalf("after restart: driver %q", d.Name)
	}
}

func capabilities(t *testing.T, g *servetest.Gateway) drivers.Description {
	t.Helper()
	resp, err := http.Get(g.AdminURL + "/capabilities")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var d drivers.Description
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /capabilities: %s, %v", resp.Status, err)
	}
	return d
}
