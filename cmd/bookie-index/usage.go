package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/errors"
)

// The command line convention, the same at every level (like the go
// command's and Pebble's tool):
//
//   - -h, -help and --help (and the word help in a group) print the usage
//     on stdout and exit 0;
//   - a usage error is one line on stderr naming the command and how to
//     get its usage, exit 2;
//   - flags may come before, between or after the positional arguments;
//     "--" ends the flags (every later token is positional), and a token
//     that reads as a negative number ("-1") is positional, never a flag:
//     no flag's name starts with a digit.

// helpRequested is returned by a command asked for its usage; run prints
// header, then the flags, on stdout and exits 0.
type helpRequested struct {
	// header is the usage line and the description; the innermost command
	// that knows them fills it in.
	header string
	// flags is the flag set's defaults (fs.PrintDefaults), empty if the
	// command has no flags.
	flags string
}

func (h *helpRequested) Error() string { return "help requested" }

// text is the whole usage as printed.
func (h *helpRequested) text() string {
	var b strings.Builder
	b.WriteString(h.header)
	if !strings.HasSuffix(h.header, "\n") {
		b.WriteString("\n")
	}
	if h.flags != "" {
		b.WriteString("\nflags:\n")
		b.WriteString(h.flags)
	}
	return b.String()
}

// withHelpHeader sets the header of a help request that has none yet.
func withHelpHeader(err error, header string) error {
	var h *helpRequested
	if errors.As(err, &h) && h.header == "" {
		h.header = header
	}
	return err
}

// isHelp reports whether s asks for help.
func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" || s == "help" }

// isNegativeNumber reports whether s reads as a negative number, which is
// a positional argument (an id), not a flag.
func isNegativeNumber(s string) bool {
	return len(s) >= 2 && s[0] == '-' && s[1] >= '0' && s[1] <= '9'
}

// parseFlags parses flags that may come before, between or after the
// positional arguments, and returns the positional ones (see the
// convention above). A bad flag is a usage error (exit 2) holding the flag
// package's one-line message; -h is a help request.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	// The flag package would print the error and the defaults itself, on
	// top of the error run prints.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return append(positional, args[1:]...), nil
		case a == "-" || !strings.HasPrefix(a, "-") || isNegativeNumber(a):
			positional = append(positional, a)
			args = args[1:]
			continue
		}
		// One flag, with its value if it takes one and it is not given
		// with "=".
		n := 1
		name := strings.TrimLeft(a, "-")
		if !strings.Contains(name, "=") {
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && len(args) > 1 {
				n = 2
			}
		}
		if err := fs.Parse(args[:n]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				var defaults bytes.Buffer
				fs.SetOutput(&defaults)
				fs.PrintDefaults()
				return nil, &helpRequested{flags: defaults.String()}
			}
			return nil, &exitError{code: 2, err: err}
		}
		// fs.Parse stops at a non-flag; args[:n] holds one flag and its
		// value, so nothing is left over.
		args = args[n:]
	}
	return positional, nil
}

// isBoolFlag reports whether f takes no value (-json, not -json true).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// subcommand is one command of a group (db, sst).
type subcommand struct {
	name    string
	args    string // the synopsis after the name: "DIR LEDGER ENTRY"
	summary string // one line
	run     command
}

// command runs one (sub)command with its arguments.
type command func(args []string, stdout, stderr io.Writer) error

// groupUsage is the usage of a group: its subcommands, one line each.
func groupUsage(group, intro string, subs []subcommand) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: bookie-index %s <subcommand> [arguments]\n\n%s\n\nsubcommands:\n", group, intro)
	for _, s := range subs {
		fmt.Fprintf(&b, "  %s %s\n      %s\n", s.name, s.args, s.summary)
	}
	fmt.Fprintf(&b, "\nRun 'bookie-index %s <subcommand> -h' for a subcommand's flags.\n", group)
	return b.String()
}

// runSubcommand runs the subcommand of group that args[0] names. Its help
// request gets the subcommand's synopsis; its usage errors name it.
func runSubcommand(group, intro string, args []string, stdout, stderr io.Writer, subs []subcommand) error {
	if len(args) == 0 {
		return usageErrorf("missing subcommand")
	}
	if isHelp(args[0]) {
		return &helpRequested{header: groupUsage(group, intro, subs)}
	}
	for _, s := range subs {
		if s.name != args[0] {
			continue
		}
		err := s.run(args[1:], stdout, stderr)
		err = withHelpHeader(err, fmt.Sprintf("usage: bookie-index %s %s %s\n\n%s\n", group, s.name, s.args, s.summary))
		var h *helpRequested
		var e *exitError
		switch {
		case err == nil || errors.As(err, &h):
		case errors.As(err, &e):
			if e.cmd == "" {
				e.cmd = group + " " + s.name
			}
		default:
			// A failure (exit 1) names the subcommand too.
			err = &exitError{code: 1, err: err, cmd: group + " " + s.name}
		}
		return err
	}
	return usageErrorf("unknown subcommand %q", args[0])
}

// commandFlags are the flags of one command beyond the configuration's
// (compact's --dir).
type commandFlags struct {
	synopsis string // "[--dir DIR]"
	register func(fs *flag.FlagSet)
}
