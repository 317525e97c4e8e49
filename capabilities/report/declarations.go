package report

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/anysqs/anysqs/capabilities"
)

// FormatDeclarations identifies the declarations file format.
const FormatDeclarations = "anysqs-declarations/1"

// declarationsSuffix ends the name of a declarations file: <backend>.declarations.json.
const declarationsSuffix = ".declarations.json"

// Declarations is what the conformance suite records about one backend it ran.
type Declarations struct {
	Format         string `json:"format"`
	Backend        string `json:"backend"`
	DriverVersion  string `json:"driver_version"`
	ServiceVersion string `json:"service_version"` // backend service or emulator version
	Date           string `json:"date"`            // RFC 3339, UTC, when the run started
	Commit         string `json:"commit"`          // anysqs commit under test
	// Target, Clock, ReceiptScope, RealClockBudget, TestOnly, Reference and Served become the
	// report's RunConditions.
	Target          string `json:"target,omitempty"`
	Clock           string `json:"clock,omitempty"`
	ReceiptScope    string `json:"receipt_scope,omitempty"`
	RealClockBudget string `json:"real_clock_budget,omitempty"`
	TestOnly        bool   `json:"test_only,omitempty"`
	Reference       bool   `json:"reference,omitempty"`
	// Served names the test row that runs the same cases against the served binary.
	Served       string               `json:"served,omitempty"`
	Capabilities []DeclaredCapability `json:"capabilities"`
	// Operations are the driver's operational properties, nil when it declares none.
	Operations *capabilities.Operations `json:"operations,omitempty"`
}

// DeclaredCapability is one capabilities.Declaration in the file.
type DeclaredCapability struct {
	ID     string            `json:"id"`
	Level  string            `json:"level"`
	Limits map[string]string `json:"limits,omitempty"`
	Note   string            `json:"note,omitempty"`
}

// NewDeclarations builds the record of one backend's run from the fields of the
// driver's Describe output (passed one by one so this package need not import drivers).
func NewDeclarations(backend, driverVersion, serviceVersion string, decls []capabilities.Declaration, started time.Time, commit string) Declarations {
	d := Declarations{
		Format: FormatDeclarations, Backend: backend, DriverVersion: driverVersion,
		ServiceVersion: serviceVersion, Date: started.UTC().Format(time.RFC3339), Commit: commit,
	}
	for _, c := range decls {
		d.Capabilities = append(d.Capabilities, DeclaredCapability{
			ID: string(c.ID), Level: string(c.Level), Limits: c.Limits, Note: c.Note})
	}
	return d
}

// declarations converts back to the capabilities type, for Validate.
func (d Declarations) declarations() []capabilities.Declaration {
	out := make([]capabilities.Declaration, len(d.Capabilities))
	for i, c := range d.Capabilities {
		out[i] = capabilities.Declaration{ID: capabilities.ID(c.ID), Level: capabilities.Level(c.Level),
			Limits: c.Limits, Note: c.Note}
	}
	return out
}

// WriteDeclarations writes d to dir/<backend>.declarations.json, replacing any earlier
// file atomically so a concurrent reader never sees half of one.
func WriteDeclarations(dir string, d Declarations) error {
	if d.Backend == "" || strings.ContainsAny(d.Backend, `/\`) || d.Backend[0] == '.' {
		return fmt.Errorf("report: backend name %q cannot name a file", d.Backend)
	}
	if d.Format == "" {
		d.Format = FormatDeclarations
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, d.Backend+declarationsSuffix), append(b, '\n'))
}

// ReadDeclarations reads every declarations file in dir, by backend name.
func ReadDeclarations(dir string) (map[string]Declarations, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*"+declarationsSuffix))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	out := map[string]Declarations{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var d Declarations
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("report: %s: %w", p, err)
		}
		if d.Format != FormatDeclarations {
			return nil, fmt.Errorf("report: %s: format %q, want %q", p, d.Format, FormatDeclarations)
		}
		if want := strings.TrimSuffix(filepath.Base(p), declarationsSuffix); d.Backend != want {
			return nil, fmt.Errorf("report: %s declares backend %q", p, d.Backend)
		}
		out[d.Backend] = d
	}
	return out, nil
}

// GitCommit returns the commit checked out in dir, with "-dirty" when the work tree has
// changes, or "" when git cannot tell. The conformance suite records it.
func GitCommit(dir string) string {
	run := func(args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	head, err := run("rev-parse", "HEAD")
	if err != nil {
		return ""
	}
	if st, err := run("status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
		head += "-dirty"
	}
	return head
}

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())              // no-op after the rename
	if err := f.Chmod(0o644); err != nil { // CreateTemp makes it private; reports are for reading
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
