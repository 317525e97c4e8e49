package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one entry of the dispatch table in main.go.
type command struct {
	name    string
	args    string // synopsis after the name, for the overview
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// usageError is a mistake in how anysqs was called: exit status 2, as flag and most
// Unix tools use, so that scripts can tell it from a failure of the work itself.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelpShown ends a command after it printed its help: exit status 0.
var errHelpShown = errors.New("help shown")

// exitCode maps what run returned to the process's exit status.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// newFlags returns a flag set whose help goes to stdout (asked for, exit 0) and whose
// errors go to stderr with a pointer to the help (exit 2).
func newFlags(name, synopsis, about string) *flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flags{FlagSet: fs, synopsis: synopsis, about: about}
}

// flags is a command's flag set with the text of its help.
type flags struct {
	*flag.FlagSet
	synopsis, about string
}

// parse parses args; on -h/--help it prints the help to stdout. Positional arguments
// are left in Args().
func (fs *flags) parse(args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp(stdout)
		return errHelpShown
	}
	return usagef("%s: %v (see anysqs %s --help)", fs.Name(), err, fs.Name())
}

// printHelp writes a flag set's help: synopsis, description, then its flags with
// two dashes, the form the README and completion use (Go's flag accepts both).
func (fs *flags) printHelp(w io.Writer) {
	fmt.Fprintf(w, "Usage: anysqs %s %s\n", fs.Name(), fs.synopsis)
	if fs.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(fs.about))
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		head := "  --" + f.Name
		if len(f.Name) == 1 {
			head = "  -" + f.Name
		}
		if arg != "" {
			head += " " + arg
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "-1" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		if len(head) <= 22 {
			fmt.Fprintf(w, "%-24s%s\n", head, usage)
		} else {
			fmt.Fprintf(w, "%s\n%24s%s\n", head, "", usage)
		}
	})
	fmt.Fprintf(w, "%-24s%s\n", "  -h, --help", "this help")
}

// noArgs rejects positional arguments a command does not take.
func (fs *flags) noArgs() error {
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q (see anysqs %s --help)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
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
		return usagef("no command given")
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
	return usagef("unknown command %q; commands: %s (see anysqs --help)", args[0], commandNames())
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}
