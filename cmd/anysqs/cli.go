package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/mq"
)

// command is one entry of the dispatch table in main.go.
type command struct {
	name    string
	args    string // synopsis after the name, for the overview
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// overview prints the top-level help.
func overview(w io.Writer) {
	fmt.Fprintf(w, "anysqs: an SQS-compatible gateway over pluggable storage backends.\n\nUsage: anysqs COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-34s %s\n", c.name+" "+c.args, c.summary)
	}
	fmt.Fprintf(w, "\nRun `anysqs COMMAND --help` for a command's flags. Documentation: README.md, docs/.\n")
}

// dispatch runs the command args[0] of table, or prints the overview.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		overview(stderr)
		return cli.Usagef("no command given")
	}
	switch args[0] {
	case "-h", "-help", "--help":
		overview(stdout)
		return nil
	case "-v", "-version", "--version":
		return runVersion(ctx, nil, stdout, stderr)
	case "help":
		if len(args) == 1 {
			overview(stdout)
			return nil
		}
		// `anysqs help serve` is `anysqs serve --help`; `anysqs help mq send` likewise.
		return dispatch(ctx, append(args[1:], "--help"), stdout, stderr)
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return cli.Usagef("unknown command %q; commands: %s (see anysqs --help)", args[0], commandNames())
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

// stdin is where `mq send --body -` and `mq delete-batch -r -` read; tests replace it.
var stdin io.Reader = os.Stdin

func runMQ(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return mq.Run(ctx, args, stdin, stdout, stderr)
}
