package main

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestChurnEvents(t *testing.T) {
	m := time.Minute
	ev := churnEvents(15*m, m, 5*m, 5*m)
	var windows int
	var hold, release, end int = -1, -1, -1
	for i, e := range ev {
		switch e.kind {
		case eventWindow:
			windows++
		case eventHold:
			hold = i
		case eventRelease:
			release = i
		case eventEnd:
			end = i
		}
		if i > 0 && ev[i-1].at > e.at {
			t.Fatalf("events out of order: %v", ev)
		}
	}
	if windows != 14 || end != len(ev)-1 || ev[end].at != 15*m {
		t.Fatalf("want 14 windows and the end at 15m last: %v", ev)
	}
	// The window ending at the hold's start closes before the hold starts, and so at its end.
	if ev[hold].at != 5*m || ev[hold-1] != (churnEvent{5 * m, eventWindow}) {
		t.Errorf("hold: %v", ev)
	}
	if ev[release].at != 10*m || ev[release-1] != (churnEvent{10 * m, eventWindow}) {
		t.Errorf("release: %v", ev)
	}

	// A hold past the end is not released by a scheduled event; no hold at all has none.
	ev = churnEvents(3*m, 30*time.Second, 2*m, 5*m)
	if slices.ContainsFunc(ev, func(e churnEvent) bool { return e.kind == eventRelease }) ||
		!slices.Contains(ev, churnEvent{2 * m, eventHold}) {
		t.Errorf("hold past the end: %v", ev)
	}
	ev = churnEvents(150*time.Second, m, 0, 0)
	want := []churnEvent{{m, eventWindow}, {2 * m, eventWindow}, {150 * time.Second, eventEnd}}
	if !slices.Equal(ev, want) {
		t.Errorf("no hold, short last window: %v, want %v", ev, want)
	}
}

func TestChurnPhases(t *testing.T) {
	m := time.Minute
	got := churnPhases(15*m, 5*m, 5*m)
	want := []churnPhase{{"before", 0, 5 * m, false}, {"held", 5 * m, 10 * m, true}, {"after", 10 * m, 15 * m, false}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := churnPhases(15*m, 0, 20*m); len(got) != 1 || got[0].name != "held" || got[0].to != 15*m {
		t.Errorf("held throughout: %v", got)
	}
	if got := churnPhases(15*m, 5*m, 0); len(got) != 1 || got[0].name != "no hold" {
		t.Errorf("no hold: %v", got)
	}
}

func TestHeldLabel(t *testing.T) {
	m := time.Minute
	for _, c := range []struct {
		from, to time.Duration
		want     string
	}{
		{4 * m, 5 * m, "no"}, {5 * m, 6 * m, "yes"}, {9 * m, 10 * m, "yes"}, {10 * m, 11 * m, "no"},
		{4 * m, 6 * m, "part"}, {9*m + 30*time.Second, 10*m + 30*time.Second, "part"},
	} {
		if got := heldLabel(c.from, c.to, 5*m, 5*m); got != c.want {
			t.Errorf("window %s–%s: %q, want %q", c.from, c.to, got, c.want)
		}
	}
	if got := heldLabel(0, m, 0, 0); got != "no" {
		t.Errorf("no hold: %q", got)
	}
}

// windowRecorder holds receives of 1..100 ms, sends of 2 ms, deletes of 3 ms and two
// failed deletes.
func windowRecorder() *recorder {
	rec := newRecorder()
	for i := 1; i <= 100; i++ {
		rec.add("receive", time.Duration(i)*time.Millisecond, nil)
		rec.add("send", 2*time.Millisecond, nil)
		rec.add("delete", 3*time.Millisecond, nil)
	}
	rec.add("delete", 0, errors.New("boom | bang"))
	rec.add("delete", 0, errors.New("boom again"))
	return rec
}

func TestChurnRowAndLine(t *testing.T) {
	pg := pgSample{TableBytes: 3 << 20, IndexesBytes: 1 << 19, LiveTuples: 12, DeadTuples: 34567, Vacuums: 2, XminAge: 890,
		Indexes: map[string]int64{"messages_pkey": 1 << 18, "messages_visible": 1 << 18}}
	r := newChurnRow(time.Minute, 2*time.Minute, "yes", 50*time.Second, 100, 200, 3, windowRecorder(), pg)
	if r.CyclesPerSec != 2 || r.MessagesPerSec != 4 || r.From != 60 || r.To != 120 || r.EmptyReceives != 3 {
		t.Errorf("rates and bounds: %+v", r)
	}
	if r.ReceiveP50Ms != 51 || r.ReceiveP99Ms != 100 || r.SendP99Ms != 2 || r.DeleteP99Ms != 3 {
		t.Errorf("latencies: %+v", r)
	}
	if r.Errors != 2 || r.FirstError != "delete: boom | bang" {
		t.Errorf("errors: %d %q", r.Errors, r.FirstError)
	}
	want := "| 2 | yes | 2 (4) | 51.00 / 100.00 | 2 (delete: boom / bang) | 3.0 | 0.5 | 12 | 34567 | 2 | 890 |\n"
	if got := churnLine(r); got != want {
		t.Errorf("line\n got %q\nwant %q", got, want)
	}
	if n := strings.Count(churnLine(r), "|"); n != strings.Count(strings.SplitN(churnHeader, "\n", 2)[0], "|") {
		t.Errorf("line has %d cells' bars, header another number", n)
	}

	r = newChurnRow(0, 30*time.Second, "no", 30*time.Second, 0, 0, 0, newRecorder(), pgSample{Err: "no table"})
	want = "| 0.5 | no | 0 (0) | 0.00 / 0.00 | 0 (stats: no table) | 0.0 | 0.0 | 0 | 0 | 0 | 0 |\n"
	if got := churnLine(r); got != want {
		t.Errorf("empty window\n got %q\nwant %q", got, want)
	}
}

func TestMinutes(t *testing.T) {
	for s, want := range map[float64]string{0: "0", 5: "0.08", 30: "0.5", 60: "1", 90: "1.5", 900: "15", 910: "15.17"} {
		if got := minutes(s); got != want {
			t.Errorf("minutes(%v) = %q, want %q", s, got, want)
		}
	}
}

func TestIndexTable(t *testing.T) {
	rows := []churnRow{
		{To: 60, Held: "no", pgSample: pgSample{Indexes: map[string]int64{"messages_pkey": 1 << 20, "extra_b": 0, "extra_a": 2 << 20}}},
		{To: 120, Held: "yes"},
	}
	var b strings.Builder
	indexTable(&b, rows)
	want := "| minute | held | messages_pkey | messages_visible | messages_returned | messages_group | messages_group_hidden | extra_a | extra_b |\n" +
		"|---:|---|---:|---:|---:|---:|---:|---:|---:|\n" +
		"| 1 | no | 1.0 | – | – | – | – | 2.0 | 0.0 |\n" +
		"| 2 | yes | – | – | – | – | – | – | – |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPhaseSummary(t *testing.T) {
	m := time.Minute
	row := func(to time.Duration, table, idx, dead int64) churnRow {
		return churnRow{To: to.Seconds(), pgSample: pgSample{TableBytes: table, IndexesBytes: idx, DeadTuples: dead}}
	}
	rows := []churnRow{row(m, 10, 1, 5), row(2*m, 20, 2, 6), row(3*m, 50, 4, 7), row(4*m, 55, 5, 1)}
	phases := churnPhases(4*m, m, 2*m)
	held := newPhaseSummary(phases[1], 2*m, 1200, windowRecorder(), rows)
	if held.Phase != "held" || held.MessagesPerSec != 10 || held.TableGrowth != 40 || held.IndexesGrowth != 3 ||
		held.DeadAtEnd != 7 || held.ReceiveP99Ms != 100 || held.Errors != 2 {
		t.Errorf("held: %+v", held)
	}
	before := newPhaseSummary(phases[0], m, 60, newRecorder(), rows)
	if before.TableGrowth != 10 || before.DeadAtEnd != 5 || before.MessagesPerSec != 1 {
		t.Errorf("before (from zero): %+v", before)
	}
	var b strings.Builder
	phaseTable(&b, []phaseSummary{held})
	if !strings.Contains(b.String(), "| held | 1–3 | 10 | 51.00 / 100.00 | 2 | +0.0 | +0.0 | 7 |\n") {
		t.Errorf("phase table:\n%s", b.String())
	}
}
