package testbed_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/internal/testbed"
)

// everywhere may name every backend: the table and this test, the test environment's
// service finders, and the binary's build lists (checked against the table by
// cmd/anysqs's TestBuildListsMatchTheTable).
var everywhere = []string{"internal/testbed/testbed.go", "internal/testbed/guard_test.go", "internal/testenv/testenv.go",
	"cmd/anysqs/backends_cloud.go", "cmd/anysqs/backends_lite.go"}

// named are the other files that may name a backend, outside its driver's directory.
// The embedded default and PostgreSQL are the product's default and the store several
// gateways share in the system tests, so many files pick them on purpose; their lists
// may only shrink: a file that starts naming one fails this test.
var named = map[string][]string{
	// Scenarios of Spanner's own: contention in the conformance harness, and the
	// switchover docs/migration.md walks through.
	"spanner": {"conformance/spanner_contention_test.go", "conformance/system/doc.go", "conformance/system/switchover_test.go"},
	"sqlite": {
		"capabilities/example_test.go", "capabilities/report/model.go",
		"capabilities/report/testjson.go", "capabilities/report/twoway_test.go",
		"cmd/anysqs/console_test.go", "cmd/anysqs/driver_test.go", "cmd/anysqs/exposure_test.go",
		"cmd/anysqs/helm_test.go", "cmd/anysqs/main.go", "cmd/anysqs/main_test.go",
		"cmd/anysqs/migrate_test.go", "cmd/anysqs/mq_test.go", "cmd/anysqs/tls_test.go",
		"cmd/anysqs/version.go", "conformance/accounts_test.go", "conformance/auth_test.go",
		"conformance/backends_test.go", "conformance/clients/doc.go",
		"conformance/conformance_test.go", "conformance/policy_test.go",
		"conformance/query_cli_test.go", "conformance/query_json_test.go",
		"conformance/served_test.go", "conformance/system/doc.go",
		"conformance/system/switchover_test.go", "conformance/twoway_test.go",
		"conformance/unsupported_test.go", "conformance/wire_forms_test.go", "drivers/driver.go",
		"drivers/plugin/boundary_test.go", "drivers/plugin/contract_test.go",
		"drivers/plugin/gateway_test.go", "drivers/plugin/host.go", "drivers/plugin/main_test.go",
		"drivers/plugin/plugin.go", "drivers/sqsrule/doc.go", "examples/counting-plugin/main.go",
		"gateway/bench_test.go", "gateway/errors_internal_test.go", "gateway/helpers_test.go",
		"gateway/limits_test.go", "gateway/policy_test.go", "gateway/queuecache_test.go",
		"gateway/redrive_test.go", "gateway/seam_test.go", "internal/brokerprofile/brokerprofile.go",
		"internal/brokerprofile/contract_test.go", "internal/brokerprofile/doc.go",
		"internal/config/config.go", "internal/config/config_test.go",
		"internal/migrate/kill_test.go", "internal/migrate/migrate_test.go",
		"internal/migrate/throughput_test.go", "internal/servetest/servetest_test.go",
	},
	"postgres": {
		"capabilities/report/html.go", "capabilities/report/twoway_test.go",
		"cmd/anysqs-load/budget.go", "cmd/anysqs-load/churn.go",
		"cmd/anysqs-load/cpu.go", "cmd/anysqs-load/cpu_test.go",
		"cmd/anysqs-load/load.go", "cmd/anysqs-load/load_test.go", "cmd/anysqs-load/main.go",
		"cmd/anysqs-load/paths.go", "cmd/anysqs-load/peers.go", "cmd/anysqs/helm_test.go",
		"cmd/anysqs/main.go", "cmd/anysqs/version.go", "conformance/accounts_test.go",
		"conformance/backend_postgres_test.go", "conformance/backends_test.go", "conformance/doc.go",
		"conformance/gateways_shared_test.go", "conformance/system/crash_test.go",
		"conformance/system/doc.go", "conformance/system/env_test.go",
		"conformance/system/rolling_test.go", "conformance/system/switchover_test.go",
		"drivers/driver.go", "drivers/plugin/contract_test.go", "drivers/plugin/doc.go",
		"drivers/plugin/errors_internal_test.go", "drivers/plugin/main_test.go",
		"drivers/sqsrule/doc.go", "gateway/queuecache_test.go", "internal/config/config.go",
		"internal/config/config_test.go", "internal/gctune/gctune.go",
		"internal/migrate/kill_test.go", "internal/migrate/throughput_test.go",
	},
}

// TestBackendNamesStayInTheirPackages: a Go file that names a backend (its name in any
// case) lives in the backend's driver directory, or is one of those above. Adding a
// backend is then its driver package, its row in testbed.All, its config, guide and
// services script: every suite iterates the table.
func TestBackendNamesStayInTheirPackages(t *testing.T) {
	root := filepath.Join("..", "..")
	var offending []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "node_modules" || n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := strings.ToLower(string(b))
		for _, name := range testbed.Names() {
			if !strings.Contains(text, name) || strings.HasPrefix(rel, "drivers/"+name+"/") ||
				slices.Contains(everywhere, rel) || slices.Contains(named[name], rel) {
				continue
			}
			offending = append(offending, rel+" names "+name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(offending) > 0 {
		t.Errorf("files naming a backend outside its driver directory (iterate testbed.All instead):\n  %s",
			strings.Join(offending, "\n  "))
	}
	// The lists name files that still exist and still name the backend, so they only shrink.
	for name, files := range named {
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(root, f))
			if err != nil || !strings.Contains(strings.ToLower(string(b)), name) {
				t.Errorf("named[%q] lists %s, which no longer names it (%v): drop it from the list", name, f, err)
			}
		}
	}
}
