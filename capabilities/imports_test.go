package capabilities_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/anysqs/anysqs"

// goList runs go list in the module with args and returns its output lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not available")
	}
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// TestCapabilitiesIsStandardLibraryOnly keeps capabilities a leaf that drivers, the
// gateway, the conformance suite and plugins can all import.
func TestCapabilitiesIsStandardLibraryOnly(t *testing.T) {
	// The pattern covers capabilities/report too.
	for _, dep := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./capabilities/...") {
		if !strings.HasPrefix(dep, module+"/capabilities") {
			t.Errorf("capabilities/... depends on %s; only the standard library is allowed", dep)
		}
	}
	// capabilities itself imports nothing of the project, not even its own subpackages.
	for _, dep := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./capabilities") {
		if dep != module+"/capabilities" {
			t.Errorf("capabilities depends on %s", dep)
		}
	}
}

// TestDriversDoNotImportGateway keeps imports one-way: cmd → gateway → drivers.
func TestDriversDoNotImportGateway(t *testing.T) {
	for _, dep := range goList(t, "-e", "-deps", "-f", "{{.ImportPath}}", "./drivers/...") {
		if strings.HasPrefix(dep, module+"/gateway") || strings.HasPrefix(dep, module+"/cmd") {
			t.Errorf("drivers/... depends on %s", dep)
		}
	}
}

// TestContractIsPlainData keeps the Driver contract free of any library's types (a
// Prometheus collector, say), which an out-of-process driver could never send: package
// drivers depends on the standard library and capabilities only.
func TestContractIsPlainData(t *testing.T) {
	for _, dep := range goList(t, "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./drivers") {
		if dep != module+"/drivers" && dep != module+"/capabilities" {
			t.Errorf("drivers depends on %s; the contract must be plain data", dep)
		}
	}
}
