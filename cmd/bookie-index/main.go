// Command bookie-index runs the bookie-index service and its operator
// tools:
//
//	bookie-index serve   [--conf FILE] [--set key=value ...]   run the service
//	bookie-index compact [--conf FILE] [--set key=value ...]   compact every index, offline
//	bookie-index rebuild [--conf FILE] [--set key=value ...]   rebuild every index from the entry logs, offline
//	bookie-index check   [--conf FILE] [--set key=value ...]   check every entry log against its index, offline
//	bookie-index gc      [--conf FILE] [--major|--minor]       one entry-log garbage collection, offline
//	bookie-index check-ledgers-index [--conf FILE]             read every record of every ledgers index, offline
//	bookie-index relocate [--conf FILE]                        record the new paths of moved directories, offline
//	bookie-index sst     build|props|scan|layout|verify  inspect or build one table
//	bookie-index db      props|get|floor|scan|check|manifest|wal|ledgers|checkpoint
//	                                                     inspect (or checkpoint) a closed database
//	bookie-index version                                 the module version, VCS commit and Go version (also --version)
//
// serve, compact and rebuild also take --log-level debug|info|warn|error
// and --log-format text|json (the logLevel and logFormat keys); their one
// logger, on stderr, is the storage's, every index's and engine's (see
// docs/operations.md, "Logs").
//
// Exit codes: 0 success, 1 the operation failed (a bad table, an I/O
// error), 2 bad usage. Errors are one line on stderr. -h or --help, at
// every level, prints the usage on stdout and exits 0 (see usage.go for
// the whole convention).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cockroachdb/errors"
)

// exitError carries an exit code through the command functions.
type exitError struct {
	code int
	err  error
	// cmd is the (sub)command a usage error is about, for the hint
	// pointing to its -h ("db get"); empty: the top-level command.
	cmd string
}

func (e *exitError) Error() string { return e.err.Error() }

// Unwrap lets errors.Is and errors.As see the error carried.
func (e *exitError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...interface{}) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

const usage = `usage: bookie-index <command> [arguments]

commands:
  serve    run the entry location index service (--conf FILE, or the embedded default)
  compact  fully compact every directory's entry location index, offline (--conf FILE)
  rebuild  rebuild every directory's entry location index from its entry logs, offline (--conf FILE)
  check    check every directory's entry logs and entry location index against each other, offline (--conf FILE)
  gc       one forced entry-log garbage collection of every directory, offline (--conf FILE, --major|--minor)
  migrate  convert a stopped BookKeeper bookie's RocksDB indexes into this storage's (--conf FILE)
  check-ledgers-index  read every record of every directory's ledgers index, offline (--conf FILE)
  relocate record the new paths of directories that moved (a restored backup, a new mount point), offline (--conf FILE)
  bench    the entry-location benchmark (docs/benchmarks.md): load, get, floor, miss, delete, mixed
  sst      build, inspect and verify one table: sst build|props|scan|layout|verify
  db       inspect a closed database read-only, or checkpoint it:
           db props|get|floor|scan|check|manifest|wal|ledgers|checkpoint
  version  print the module version, VCS commit and Go version (also --version)

Run 'bookie-index <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes a command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "version", "--version", "-version":
		if len(args) > 1 && !isHelp(args[1]) {
			fmt.Fprintf(stderr, "bookie-index version: unexpected argument %q (run 'bookie-index -h' for usage)\n", args[1])
			return 2
		}
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "serve":
		err = runServe(args[1:], stdout, stderr)
	case "compact":
		err = runCompact(args[1:], stdout, stderr)
	case "rebuild":
		err = runRebuild(args[1:], stdout, stderr)
	case "check":
		err = runCheck(args[1:], stdout, stderr)
	case "gc":
		err = runGC(args[1:], stdout, stderr)
	case "migrate":
		err = runMigrate(args[1:], stdout, stderr)
	case "relocate":
		err = runRelocate(args[1:], stdout, stderr)
	case "check-ledgers-index":
		err = runCheckLedgersIndex(args[1:], stdout, stderr)
	case "sst":
		err = runSST(args[1:], stdout, stderr)
	case "bench":
		err = runBench(args[1:], stdout, stderr)
	case "db":
		err = runDB(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "bookie-index: unknown command %q (run 'bookie-index -h' for usage)\n", args[0])
		return 2
	}
	if err == nil {
		return 0
	}
	var help *helpRequested
	if errors.As(err, &help) {
		fmt.Fprint(stdout, help.text())
		return 0
	}
	code, cmd := 1, args[0]
	var e *exitError
	if errors.As(err, &e) {
		code = e.code
		if e.cmd != "" {
			cmd = e.cmd
		}
	}
	if code == 2 {
		fmt.Fprintf(stderr, "bookie-index %s: %v (run 'bookie-index %s -h' for usage)\n", cmd, oneLine(err), cmd)
		return code
	}
	fmt.Fprintf(stderr, "bookie-index %s\n", withCommand(cmd, err.Error()))
	return code
}

// withCommand prefixes msg with the command's name, once: the packages
// behind some commands (relocate) start their errors with the same name,
// which read "relocate: relocate: ..." prefixed again.
func withCommand(cmd, msg string) string {
	if strings.HasPrefix(msg, cmd+": ") {
		return msg
	}
	return cmd + ": " + msg
}

// oneLine joins the lines of an error's message, so that a usage error is
// one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
}
