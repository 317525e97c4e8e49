package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/testbed"
)

// TestLiteBuild builds bin/anysqs as make run does for the embedded default
// (-tags anysqs_lite): the cloud drivers are not compiled in, a config naming one fails
// to start naming the tag and make build, and anysqs version says the build is lite.
func TestLiteBuild(t *testing.T) {
	deps, err := exec.Command("go", "list", "-tags", "anysqs_lite", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -tags anysqs_lite -deps: %v", err)
	}
	for _, b := range testbed.All {
		if in := strings.Contains(string(deps), "github.com/anysqs/anysqs/drivers/"+b.Name+"\n"); in != b.Lite {
			t.Errorf("the lite build compiles in drivers/%s: %v; internal/testbed says %v", b.Name, in, b.Lite)
		}
	}
	bin := filepath.Join(t.TempDir(), "anysqs")
	if out, err := exec.Command("go", "build", "-tags", "anysqs_lite", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags anysqs_lite: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "lite build") {
		t.Errorf("anysqs version of a lite build: %q, %v", out, err)
	}
	for _, b := range testbed.All {
		if b.Lite {
			continue
		}
		out, err := exec.Command(bin, "serve", "--config", testbed.ConfigOf(b.Name)).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "backend "+b.Name+" is not compiled into this binary") ||
			!strings.Contains(string(out), "make build") {
			t.Fatalf("serve configs/%s.yaml with a lite build: %v\n%s", b.Config, err, out)
		}
	}
}

// TestBuildListsMatchTheTable: backends_cloud.go imports, and backends_lite.go names,
// exactly the backends internal/testbed keeps out of the lite build.
func TestBuildListsMatchTheTable(t *testing.T) {
	var want []string
	for _, b := range testbed.All {
		if !b.Lite {
			want = append(want, b.Name)
		}
	}
	slices.Sort(want)
	cloud, err := os.ReadFile("backends_cloud.go")
	if err != nil {
		t.Fatal(err)
	}
	var imported []string
	for _, m := range regexp.MustCompile(`"github.com/anysqs/anysqs/drivers/(\w+)"`).FindAllStringSubmatch(string(cloud), -1) {
		imported = append(imported, m[1])
	}
	slices.Sort(imported)
	if !slices.Equal(imported, want) {
		t.Errorf("backends_cloud.go imports %v; the table's cloud backends are %v", imported, want)
	}
	lite, err := os.ReadFile("backends_lite.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`range \[\]string\{([^}]*)\}`).FindStringSubmatch(string(lite))
	if m == nil {
		t.Fatal("backends_lite.go has no list of the backends it leaves out")
	}
	var named []string
	for _, q := range strings.Split(m[1], ",") {
		named = append(named, strings.Trim(strings.TrimSpace(q), `"`))
	}
	slices.Sort(named)
	if !slices.Equal(named, want) {
		t.Errorf("backends_lite.go leaves out %v; the table's cloud backends are %v", named, want)
	}
}
