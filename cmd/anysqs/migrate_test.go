package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMigrateCommand runs `anysqs migrate` between two SQLite directories: usage
// mistakes exit 2, a run exits 0 and prints its report, a rerun resumes.
func TestMigrateCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.yaml", "backend: {name: sqlite, options: {data_dir: ./a}}\n")
	b := write("b.yaml", "account_id: \"222222222222\"\nbackend: {name: sqlite, options: {data_dir: ./b}}\n")
	state := filepath.Join(dir, "state.json")
	tests := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"no files", []string{"migrate"}, 2, ""},
		{"same storage", []string{"migrate", "--from", a, "--to", a}, 2, ""},
		{"bad mode", []string{"migrate", "--from", a, "--to", b, "--mode", "teleport", "--state", state}, 1, ""},
		{"copy", []string{"migrate", "--from", a, "--to", b, "--verify", "--state", state}, 0, "at most 0 messages may be duplicated"},
		{"resume", []string{"migrate", "--from", a, "--to", b, "--verify", "--state", state}, 0, "resumed from the state file"},
		{"other mode on the same journal", []string{"migrate", "--from", a, "--to", b, "--mode", "move", "--state", state}, 1, ""},
		{"state in a directory", []string{"migrate", "--from", a, "--to", b, "--mode", "move", "--state", t.TempDir()}, 0, "0 messages in"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(context.Background(), tt.args, &out, &errb)
		if got := exitCode(err); got != tt.code {
			t.Errorf("%s: exit %d (%v), want %d\n%s%s", tt.name, got, err, tt.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), tt.out) {
			t.Errorf("%s: output lacks %q:\n%s", tt.name, tt.out, out.String())
		}
	}
}
