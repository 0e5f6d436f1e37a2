package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/check"
	"github.com/cockroachdb/errors"
)

// runCheck checks the directory layout, then everything serve reads of
// every ledger directory, offline: findings and a summary per directory
// on stdout, progress on stderr. It fails (exit 1) if it finds a problem.
func runCheck(args []string, stdout, stderr io.Writer) error {
	tool, err := loadOfflineTool("check", "Checks every ledger directory of the configuration offline: stop\n"+
		"'bookie-index serve' first (a directory it holds is refused). It reads what\n"+
		"serve reads: the directory layout (every LAYOUT copy, and the list against\n"+
		"the configuration), lastId, the compaction marker, a migration's marker,\n"+
		"both indexes as 'db check' does (every table block, filters included; WALs;\n"+
		"manifest), every entry log to its end with its ledgers map, and every\n"+
		"location of the entry location index, which must name an intact record of\n"+
		"its entry, of a ledger the ledgers index holds, at or above the floor of the\n"+
		"ledger's current life. Prints each finding (file and offset; ledger, entry\n"+
		"and location) and a summary per directory. Warnings: a torn tail no location\n"+
		"names at the end of the newest log, or of any log when an interrupted write\n"+
		"explains it (what a crash leaves); what a crash leaves in an index; a\n"+
		"location of a ledger without a record. Exits 1 on any problem, 0 when clean.\n"+
		"Writes nothing.", args, stderr)
	if err != nil {
		return err
	}
	c := tool.c
	n := len(c.LedgerDirectories)
	withProblems := 0
	// The whole list first, as serve's start does: copies that disagree,
	// a directory configured at another's place, a changed list.
	layoutRefused := false
	if opts, _, err := storageOptions(c, tool.log); err != nil {
		return err
	} else if err := bookie.CheckLayout(opts); err != nil {
		fmt.Fprintf(stdout, "check: problem: directory layout: %v\n", err)
		layoutRefused = true
	}
	failed := eachDirectory(context.Background(), "check", c.LedgerDirectories, stderr, func(i int, prefix string) error {
		due := progressThrottle()
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
	var msg string
	switch {
	case failed > 0 && withProblems > 0:
		msg = fmt.Sprintf("%d of %d directories could not be checked, %d have problems", failed, n, withProblems)
	case failed > 0:
		msg = fmt.Sprintf("%d of %d directories could not be checked", failed, n)
	case withProblems > 0:
		msg = fmt.Sprintf("problems found in %d of %d directories", withProblems, n)
	}
	switch {
	case layoutRefused && msg != "":
		return errors.Newf("serve refuses the directory layout; %s", msg)
	case layoutRefused:
		return errors.New("serve refuses the directory layout")
	case msg != "":
		return errors.New(msg)
	}
	return nil
}
