package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLiteBuild builds bin/anysqs as make run does for the embedded default
// (-tags anysqs_lite): the cloud drivers are not compiled in, a config naming one fails
// to start naming the tag and make build, and anysqs version says the build is lite.
func TestLiteBuild(t *testing.T) {
	deps, err := exec.Command("go", "list", "-tags", "anysqs_lite", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -tags anysqs_lite -deps: %v", err)
	}
	for _, d := range []string{"cosmos", "firestore", "servicebus", "spanner"} {
		if strings.Contains(string(deps), "github.com/anysqs/anysqs/drivers/"+d+"\n") {
			t.Errorf("the lite build compiles in drivers/%s", d)
		}
	}
	bin := filepath.Join(t.TempDir(), "anysqs")
	if out, err := exec.Command("go", "build", "-tags", "anysqs_lite", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags anysqs_lite: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "lite build") {
		t.Errorf("anysqs version of a lite build: %q, %v", out, err)
	}
	out, err := exec.Command(bin, "serve", "--config", "../../configs/spanner.yaml").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "backend spanner is not compiled into this binary") ||
		!strings.Contains(string(out), "make build") {
		t.Fatalf("serve configs/spanner.yaml with a lite build: %v\n%s", err, out)
	}
}
