package main

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
)

func TestTargetFlag(t *testing.T) {
	var l targetList
	for _, v := range []string{"goaws=http://127.0.0.1:4100@42", "moto=http://127.0.0.1:5000"} {
		if err := l.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	want := []target{{Name: "goaws", Endpoint: "http://127.0.0.1:4100", PID: 42}, {Name: "moto", Endpoint: "http://127.0.0.1:5000"}}
	if len(l) != 2 || l[0] != want[0] || l[1] != want[1] {
		t.Fatalf("got %+v, want %+v", l, want)
	}
	for _, bad := range []string{"", "noequals", "=http://x", "a=", "a=http://x@0", "a=http://x@pid"} {
		if err := l.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestPeersReport(t *testing.T) {
	rep := peersReport{Workers: 16, Rounds: 3, BodySize: 100, Targets: []target{{Name: "a", PID: 1}, {Name: "b<c"}}}
	for round, rate := range []float64{100, 300, 200} {
		rep.Closed = append(rep.Closed, closedPoint{Target: "a", Batch: 1, Round: round + 1, Rate: rate,
			Calls: map[string]callStats{"send": {P50: 1, P99: 2}}, CPU: &cpuPerMessage{Server: rate, Total: rate}})
		rep.Closed = append(rep.Closed, closedPoint{Target: "b<c", Batch: 1, Round: round + 1, Rate: 2 * rate})
	}
	for _, r := range []int{100, 1000} {
		rep.Open = append(rep.Open, openPoint{Target: "a", Rate: r, Exchange: callStats{P50: 0.5, P99: 0.9 * float64(r) / 100}},
			openPoint{Target: "b<c", Rate: r, Exchange: callStats{P50: 1, P99: 40}})
	}
	var md bytes.Buffer
	peersTables(&md, rep, []int{1}, []int{100, 1000}, rep.Targets)
	for _, want := range []string{"| a | 1 | 200 | 1.00 / 2.00 |", "| 200 / 0 / 0 / 0 = 200 |", "| b<c | 1 | 400 |", "| a | 0.50 / 0.90 | 0.50 / 9.00 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, md.String())
		}
	}
	svg := latencySVG(rep, []int{100, 1000}, rep.Targets)
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d lines, want one per target", n)
	}
	if !strings.Contains(svg, "b&lt;c") {
		t.Error("target name not escaped")
	}
}
