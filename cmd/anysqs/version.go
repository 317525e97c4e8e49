package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/anysqs/anysqs/internal/cli"
)

// Set at build time by the Makefile:
//
//	go build -ldflags "-X main.version=v0.3.0 -X main.commit=abc1234" ./cmd/anysqs
//
// Without them (go install, go run) buildInfo fills in what the Go toolchain recorded.
var (
	version = ""
	commit  = ""
)

// build says what this binary is.
type build struct {
	Version, Commit, Go string
	Modified            bool // built from a tree with uncommitted changes
}

// buildInfo returns the stamped version and commit, else the module version and VCS
// revision the Go toolchain embeds (go install ...@v1.2.3 and builds in a git checkout).
func buildInfo() build {
	b := build{Version: version, Commit: commit, Go: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	if len(b.Commit) > 12 {
		b.Commit = b.Commit[:12]
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

func (b build) String() string {
	dirty := ""
	if b.Modified {
		dirty = "-dirty"
	}
	return fmt.Sprintf("anysqs %s (commit %s%s, %s %s/%s)", b.Version, b.Commit, dirty, b.Go, runtime.GOOS, runtime.GOARCH)
}

func runVersion(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("version", "[flags]", "Print the version, the commit it was built from and the Go version.")
	short := fs.Bool("short", false, "print the version only")
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if *short {
		fmt.Fprintln(stdout, buildInfo().Version)
		return nil
	}
	fmt.Fprintln(stdout, buildInfo())
	if liteBuild {
		fmt.Fprintln(stdout, "lite build: backends sqlite, postgres and plugins (make build for every backend)")
	}
	return nil
}
