package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/migrate"
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
	c := write("c.yaml", "backend: {name: sqlite, options: {data_dir: ./c}}\n")
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
		{"other storage on the same journal", []string{"migrate", "--from", a, "--to", c, "--verify", "--state", state}, 1, ""},
		{"other mode on the same journal", []string{"migrate", "--from", a, "--to", b, "--mode", "move", "--state", state}, 1, ""},
		{"state in a directory", []string{"migrate", "--from", a, "--to", b, "--mode", "move", "--state", t.TempDir()}, 0, "0 messages in"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		err := run(context.Background(), tt.args, &out, &errb)
		if got := cli.ExitCode(err); got != tt.code {
			t.Errorf("%s: exit %d (%v), want %d\n%s%s", tt.name, got, err, tt.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), tt.out) {
			t.Errorf("%s: output lacks %q:\n%s", tt.name, tt.out, out.String())
		}
	}
}

// TestMigrateProgressLine checks both displays: one line rewritten in place on a
// terminal, with log lines clearing it first; plain lines otherwise.
func TestMigrateProgressLine(t *testing.T) {
	var tty, plain bytes.Buffer
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) func() time.Time { return func() time.Time { return start.Add(d) } }
	p := &progressLine{w: &tty, tty: true, start: start, now: at(10 * time.Second)}
	p.update(migrate.Progress{Queues: 2, Messages: 500, Total: 1000})
	fmt.Fprintln(p, "level=INFO msg=\"queue done\"")
	p.update(migrate.Progress{Queues: 2, QueuesDone: 2, Messages: 1000, Total: 1000})
	p.finish()
	got := tty.String()
	for _, want := range []string{"\r\033[K500/1000 messages, 50/s, queues 0/2, ETA 10s", "\r\033[Klevel=INFO", "queues 2/2, ETA 0s\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	q := &progressLine{w: &plain, start: start, now: at(time.Second)}
	q.update(migrate.Progress{Queues: 1, QueuesDone: 1, Messages: 3, Total: 3})
	if got := plain.String(); !strings.HasPrefix(got, "progress: 3/3 messages") || strings.Contains(got, "\r") {
		t.Errorf("plain output %q", got)
	}
}
