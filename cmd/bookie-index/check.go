package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/cockroachdb/errors"
)

// checkProgressEvery is how often check reports a directory's progress.
const checkProgressEvery = 2 * time.Second

// runCheck checks the entry logs and entry location index of every ledger
// directory, offline: findings and a summary per directory on stdout,
// progress on stderr. It fails (exit 1) if it finds a problem.
func runCheck(args []string, stdout, stderr io.Writer) error {
	return checkAll(args, stdout, stderr, checkProgressEvery)
}

func checkAll(args []string, stdout, stderr io.Writer, progressEvery time.Duration) error {
	tool, err := loadOfflineTool("check", "Checks every ledger directory of the configuration offline: stop\n"+
		"'bookie-index serve' first (a directory it holds is refused). Every entry log\n"+
		"is scanned to its end, and every location of the entry location index must\n"+
		"name an intact record of its entry, of a ledger the ledgers index holds, at\n"+
		"or above the floor of the ledger's current life. Prints the damaged records\n"+
		"(file and offset), the locations that name a missing or damaged record\n"+
		"(ledger, entry, location) and a summary per directory; a torn tail no\n"+
		"location names (what a crash during a checkpoint leaves) and a location of a\n"+
		"ledger without a record are warnings. Exits 1 on any problem, 0 when clean.\n"+
		"Writes nothing.", args, stderr)
	if err != nil {
		return err
	}
	c := tool.c
	n := len(c.LedgerDirectories)
	withProblems := 0
	failed := eachDirectory(context.Background(), "check", c.LedgerDirectories, stderr, func(i int, prefix string) error {
		due := progressThrottle(progressEvery)
		res, err := check.Directory(check.Options{
			LedgerDir: c.LedgerDirectories[i],
			IndexDir:  c.IndexDirectories[i],
			Engine:    tool.engine,
			Logger:    tool.log,
			Progress: func(p check.Progress) {
				if due(false) {
					fmt.Fprintf(stderr, "%s: %d/%d entry logs scanned (%d records), %d locations verified, %s\n",
						prefix, p.LogsDone, p.Logs, p.Records, p.Locations, p.Elapsed.Round(time.Millisecond))
				}
			},
		})
		if err != nil {
			return err
		}
		for _, f := range res.Findings {
			severity := "problem"
			if !f.Kind.Problem() {
				severity = "warning"
			}
			fmt.Fprintf(stdout, "%s: %s: %s\n", prefix, severity, f.String())
		}
		if more := res.Unlisted(); more > 0 {
			fmt.Fprintf(stdout, "%s: ... and %d more findings (the summary counts them all)\n", prefix, more)
		}
		fmt.Fprintf(stdout, "%s (index %s): %s in %s\n", prefix, res.LocationsPath, res.Summary(), res.Duration.Round(time.Millisecond))
		if res.Problems() > 0 {
			withProblems++
		}
		return nil
	})
	switch {
	case failed > 0 && withProblems > 0:
		return errors.Newf("%d of %d directories could not be checked, %d have problems", failed, n, withProblems)
	case failed > 0:
		return errors.Newf("%d of %d directories could not be checked", failed, n)
	case withProblems > 0:
		return errors.Newf("problems found in %d of %d directories", withProblems, n)
	}
	return nil
}
