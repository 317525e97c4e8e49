package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.5}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: boom\n"}`,
		`{"Action":"output","Package":"p","Test":"TestB/sub","Output":"    sub failed\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB/sub"}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":2.25}`,
		`{"Action":"skip","Package":"p","Test":"TestC"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\n"}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t0.1s\n"}`,
		`{"Action":"fail","Package":"p"}`,
		`{"Action":"output","Package":"q","Output":"ok  \tq\t0.2s\n"}`,
		`{"Action":"pass","Package":"q"}`,
		`# q/broken`,
		`{"ImportPath":"r","Action":"build-output","Output":"r/x.go:3:1: syntax error\n"}`,
		`{"ImportPath":"r","Action":"build-fail"}`,
	}, "\n")
	var out bytes.Buffer
	if code := summarize(strings.NewReader(in), &out); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	got := out.String()
	for _, want := range []string{"b_test.go:9: boom", "sub failed", "FAIL\tp\t0.1s\n", "ok  \tq\t0.2s\n",
		"# q/broken", "r/x.go:3:1: syntax error\n", "failed:\n  p TestB\n  p TestB/sub\n",
		"slowest tests:\n     2.2s p TestB\n     0.5s p TestA\n", "1 passed, 1 failed, 1 skipped\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "=== RUN   TestA") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
	out.Reset()
	if code := summarize(strings.NewReader(`{"Action":"pass","Package":"q","Test":"TestA"}`), &out); code != 0 || out.String() != "slowest tests:\n     0.0s q TestA\n1 passed, 0 failed, 0 skipped\n" {
		t.Fatalf("all passing: exit %d, %q", code, out.String())
	}
}
