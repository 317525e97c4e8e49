// Package cli holds what anysqs's commands share to read their flags and report
// mistakes: a flag set that prints its help with two-dash flags, and exit statuses (0
// done or help shown, 1 failed, 2 called wrongly).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// UsageError is a mistake in how anysqs was called: exit status 2, as flag and most
// Unix tools use, so that scripts can tell it from a failure of the work itself.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{msg: fmt.Sprintf(format, args...)}
}

// ErrHelpShown ends a command after it printed its help: exit status 0.
var ErrHelpShown = errors.New("help shown")

// StatusError ends a command with its own exit status, such as apply --dry-run's 2
// for "there are changes".
type StatusError struct {
	Code int
	Msg  string
}

func (e *StatusError) Error() string { return e.Msg }

// ExitCode maps what run returned to the process's exit status.
func ExitCode(err error) int {
	var ue *UsageError
	var se *StatusError
	switch {
	case err == nil, errors.Is(err, ErrHelpShown):
		return 0
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &se):
		return se.Code
	}
	return 1
}

// NewFlags returns a flag set whose help goes to stdout (asked for, exit 0) and whose
// errors go to stderr with a pointer to the help (exit 2).
func NewFlags(name, synopsis, about string) *Flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &Flags{FlagSet: fs, synopsis: synopsis, about: about}
}

// Flags is a command's flag set with the text of its help.
type Flags struct {
	*flag.FlagSet
	synopsis, about string
}

// ParseArgs parses args; on -h/--help it prints the help to stdout. Positional arguments
// are left in Args().
func (fs *Flags) ParseArgs(args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.PrintHelp(stdout)
		return ErrHelpShown
	}
	return Usagef("%s: %v (see anysqs %s --help)", fs.Name(), err, fs.Name())
}

// PrintHelp writes a flag set's help: synopsis, description, then its flags with
// two dashes, the form the README and completion use (Go's flag accepts both).
func (fs *Flags) PrintHelp(w io.Writer) {
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

// NoArgs rejects positional arguments a command does not take.
func (fs *Flags) NoArgs() error {
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected argument %q (see anysqs %s --help)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}
