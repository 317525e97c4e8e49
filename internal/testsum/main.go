// Command testsum reads `go test -json` on stdin and prints what a person needs: each
// package's closing line as go test prints it (ok / FAIL / no test files), the output
// of every failed test in full, the slowest tests, and a last line "N passed, N failed,
// N skipped". It exits 1 when a test or a package failed. scripts/test.sh pipes the suite through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// slowest is how many of the slowest tests the summary lists.
const slowest = 12

type timed struct {
	name    string
	seconds float64
}

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

func main() {
	os.Exit(summarize(os.Stdin, os.Stdout))
}

func summarize(r io.Reader, w io.Writer) int {
	var passed, failed, skipped int
	output := map[string][]string{} // package/test → its output lines, kept until it ends
	var failures []string
	var times []timed // top-level tests, for the slowest
	pkgFailed := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(w, sc.Text()) // a build error or other plain line: pass it on
			continue
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "build-output": // compiler errors (go test -json reports them so since Go 1.24)
			fmt.Fprint(w, e.Output)
		case "build-fail":
			pkgFailed = true
		case "output":
			output[key] = append(output[key], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" { // the package's end
				for _, line := range output[key] {
					if strings.HasPrefix(line, "ok ") || strings.HasPrefix(line, "FAIL") ||
						strings.HasPrefix(line, "?") || strings.HasPrefix(line, "panic:") || e.Action == "fail" {
						fmt.Fprint(w, line)
					}
				}
				if e.Action == "fail" {
					pkgFailed = true
				}
				delete(output, key)
				continue
			}
			if strings.Contains(e.Test, "/") { // subtests are counted under their parent
				if e.Action == "fail" {
					failures = append(failures, key)
					fmt.Fprint(w, strings.Join(output[key], ""))
				}
				delete(output, key)
				continue
			}
			times = append(times, timed{e.Package + " " + e.Test, e.Elapsed})
			switch e.Action {
			case "pass":
				passed++
			case "skip":
				skipped++
			case "fail":
				failed++
				failures = append(failures, key)
				fmt.Fprint(w, strings.Join(output[key], ""))
			}
			delete(output, key)
		}
	}
	if len(failures) > 0 {
		sort.Strings(failures)
		fmt.Fprintln(w, "failed:")
		for _, f := range failures {
			fmt.Fprintln(w, "  "+f)
		}
	}
	sort.SliceStable(times, func(i, j int) bool { return times[i].seconds > times[j].seconds })
	if len(times) > slowest {
		times = times[:slowest]
	}
	fmt.Fprintln(w, "slowest tests:")
	for _, t := range times {
		fmt.Fprintf(w, "  %6.1fs %s\n", t.seconds, t.name)
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	if failed > 0 || pkgFailed {
		return 1
	}
	return 0
}
