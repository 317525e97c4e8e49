package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeProc writes a /proc tree: the machine's stat line and, per pid, comm and a stat
// line with the given utime and stime.
type fakeProc struct {
	t   *testing.T
	dir string
}

func newFakeProc(t *testing.T) fakeProc { return fakeProc{t: t, dir: t.TempDir()} }

func (f fakeProc) write(rel, content string) {
	p := filepath.Join(f.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// process writes a stat line whose command name has a space and a ')' in it, as the
// kernel allows, so the parser must count fields from the last ')'.
func (f fakeProc) process(pid, comm, utime, stime string) {
	f.write(pid+"/comm", comm+"\n")
	f.write(pid+"/stat", pid+" ("+comm+" x) y) S 1 1 1 0 -1 4194560 100 0 0 0 "+utime+" "+stime+" 0 0 20 0 4 0 100 0 0\n")
}

func (f fakeProc) machine(user, nice, system, idle, iowait, irq, softirq, steal string) {
	f.write("stat", "cpu  "+strings.Join([]string{user, nice, system, idle, iowait, irq, softirq, steal, "0", "0"}, " ")+
		"\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCPUMeterSharesAWindow(t *testing.T) {
	f := newFakeProc(t)
	m := &cpuMeter{proc: f.dir, gatewayPID: 42}
	f.machine("1000", "0", "500", "9000", "100", "0", "50", "7")
	f.process("self", "anysqs-load", "300", "100")
	f.process("42", "anysqs", "200", "50")
	f.process("100", "postgres", "400", "100")  // present throughout
	f.process("101", "postgres", "10", "0")     // ends during the window
	f.process("102", "pgbouncer", "999", "999") // not PostgreSQL
	a, err := m.sample()
	if err != nil {
		t.Fatal(err)
	}
	if a.busy != 1550 || a.idle != 9100 {
		t.Fatalf("machine busy %d idle %d, want 1550 and 9100 (steal counts as neither)", a.busy, a.idle)
	}
	if len(a.postgres) != 2 || a.postgres[100] != 500 {
		t.Fatalf("postgres processes %v", a.postgres)
	}

	f.machine("1500", "0", "700", "9300", "100", "0", "70", "9") // busy +720, idle +300
	f.process("self", "anysqs-load", "450", "150")               // +200
	f.process("42", "anysqs", "300", "100")                      // +150
	f.process("100", "postgres", "550", "150")                   // +200
	if err := os.RemoveAll(filepath.Join(f.dir, "101")); err != nil {
		t.Fatal(err)
	}
	f.process("103", "postgres", "30", "10") // started during the window: all 40 count
	b, err := m.sample()
	if err != nil {
		t.Fatal(err)
	}
	sh := b.since(a)
	want := cpuShare{gateway: 1.5, client: 2, postgres: 2.4, other: 7.2 - 1.5 - 2 - 2.4, idle: 3}
	if !near(sh.gateway, want.gateway) || !near(sh.client, want.client) || !near(sh.postgres, want.postgres) ||
		!near(sh.other, want.other) || !near(sh.idle, want.idle) {
		t.Fatalf("share %+v, want %+v", sh, want)
	}
	// 7.2 s busy over 1,000 messages is 7,200 µs each; idle 3 of 10.2 s.
	if got, wantS := sh.perMessage(1000), "1500 / 2000 / 2400 / 1300 = 7200 (29% idle)"; got != wantS {
		t.Fatalf("perMessage %q, want %q", got, wantS)
	}
	if got := sh.perMessage(0); got != "–" {
		t.Fatalf("perMessage(0) %q", got)
	}
}

func TestCPUMeterFailsWithoutTheGateway(t *testing.T) {
	f := newFakeProc(t)
	f.machine("1", "0", "1", "1", "0", "0", "0", "0")
	f.process("self", "anysqs-load", "1", "1")
	if _, err := (&cpuMeter{proc: f.dir, gatewayPID: 7}).sample(); err == nil {
		t.Fatal("sample succeeded with no process 7")
	}
	if _, err := (&cpuMeter{proc: f.dir}).sample(); err != nil {
		t.Fatalf("without a gateway pid: %v", err)
	}
	f.write("stat", "intr 1 2 3\n")
	if _, err := (&cpuMeter{proc: f.dir}).sample(); err == nil {
		t.Fatal("sample accepted a /proc/stat without its cpu line")
	}
}

func TestBudgetRound(t *testing.T) {
	cfg := closedConfig{batch: 10}
	// Plain SQL: 20,000 msg/s for 1 s, 1.8 s busy: 90 µs per message.
	sql := closedResult{msgs: 20000, elapsed: time.Second, cpu: &cpuShare{client: 0.3, postgres: 1.5, idle: 0.2}}
	// Gateway path: 10,000 msg/s, 1.8 s busy: 180 µs per message, 60 of them the gateway's.
	gw := closedResult{msgs: 10000, elapsed: time.Second, cpu: &cpuShare{gateway: 0.6, client: 0.5, postgres: 0.6, other: 0.1, idle: 0.2}}
	b, ok := newBudgetRound(cfg, 1, sql, gw, true)
	if !ok {
		t.Fatal("no budget")
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"rate share", b.rateShare, 0.5},
		{"sql", b.sql, 90},
		{"total", b.total, 180},
		{"gateway", b.gw, 60},
		{"rest", b.rest(), 120},
		{"cost share", b.costShare(), 0.5},
		{"free gateway", b.freeGateway(), 0.75},
		// 60% of plain SQL's rate allows 150 µs per message; the rest takes 120, leaving
		// 30 per message, 100 per call at 10 messages per three calls.
		{"allowed", b.allowed(0.6), 100},
		{"measured per call", b.perCall(b.gw), 200},
	}
	for _, c := range checks {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if target, ok := b.target(); !ok || target != 0.6 {
		t.Errorf("target for batch 10 = %v, %v; want 0.6", target, ok)
	}
	if _, ok := (budgetRound{cfg: closedConfig{batch: 5}}).target(); ok {
		t.Error("a target for batch 5, which the issue sets none for")
	}
	if _, ok := newBudgetRound(cfg, 1, sql, gw, false); ok {
		t.Error("a budget without the gateway's pid")
	}
	if _, ok := newBudgetRound(closedConfig{batch: 10, fifo: true}, 1, sql, gw, true); ok {
		t.Error("a budget for FIFO, which has no plain SQL path")
	}
	if _, ok := newBudgetRound(cfg, 1, closedResult{}, gw, true); ok {
		t.Error("a budget without plain SQL's CPU")
	}
}

// TestCPUMeterCountsTheGatewaysChildren: a driver plugin, the gateway's child, is the
// gateway's CPU; another process is not.
func TestCPUMeterCountsTheGatewaysChildren(t *testing.T) {
	f := newFakeProc(t)
	m := &cpuMeter{proc: f.dir, gatewayPID: 42}
	f.machine("1000", "0", "500", "9000", "100", "0", "50", "7")
	f.process("self", "anysqs-load", "300", "100")
	f.process("42", "anysqs", "200", "50")
	f.write("43/stat", "43 (anysqs) S 42 1 1 0 -1 4194560 100 0 0 0 70 30 0 0 20 0 4 0 100 0 0\n")
	f.write("44/stat", "44 (other) S 7 1 1 0 -1 4194560 100 0 0 0 500 500 0 0 20 0 4 0 100 0 0\n")
	s, err := m.sample()
	if err != nil {
		t.Fatal(err)
	}
	if s.gateway != 350 {
		t.Errorf("gateway ticks %d, want 250 of its own and 100 of its child", s.gateway)
	}
}

// TestCPUMeterOnePostgres: with postgresPID only that postmaster and its children count
// as PostgreSQL, not another server's processes on the same machine.
func TestCPUMeterOnePostgres(t *testing.T) {
	f := newFakeProc(t)
	f.machine("1000", "0", "500", "9000", "100", "0", "50", "7")
	f.process("self", "anysqs-load", "300", "100")
	f.process("100", "postgres", "400", "100") // the benchmark's postmaster (parent 1)
	f.write("104/comm", "postgres\n")          // one of its backends
	f.write("104/stat", "104 (postgres) S 100 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 100 0 0\n")
	f.process("200", "postgres", "999", "999") // another server's postmaster
	m := &cpuMeter{proc: f.dir, postgresPID: 100}
	s, err := m.sample()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.postgres) != 2 || s.postgres[100] != 500 || s.postgres[104] != 10 {
		t.Fatalf("postgres processes %v, want 100 and 104 only", s.postgres)
	}
}
