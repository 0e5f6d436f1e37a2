package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/bookie-index/bookie-index/bookie/rebuild"
)

// runRebuild rebuilds the entry location index of every ledger directory
// from its entry logs, offline, with progress lines on stderr.
func runRebuild(args []string, _, stderr io.Writer) error {
	var rebuildLedgers bool
	tool, err := loadOfflineTool("rebuild", "Rebuilds the entry location index of every ledger directory of the configuration\n"+
		"from its entry logs, offline: stop 'bookie-index serve' first. The old index is\n"+
		"moved aside as <indexDir>/current/locations.BACKUP-<timestamp>; only ledgers the\n"+
		"ledgers index holds are indexed, and of several copies of an entry the last\n"+
		"written wins (upstream's rebuild-db-ledger-locations-index). A missing or\n"+
		"unreadable ledgers index fails the directory, moving nothing, unless\n"+
		"--rebuild-ledgers-index rebuilds it too (upstream's rebuild-db-ledgers-index).", args, stderr,
		commandFlags{synopsis: "[--rebuild-ledgers-index]", register: func(fs *flag.FlagSet) {
			fs.BoolVar(&rebuildLedgers, "rebuild-ledgers-index", false, "rebuild the ledgers index too, from the entry logs: every ledger found exists and is fenced, with no master key;\n"+
				"deleted ledgers still in the entry logs come back (the old one is kept as ledgers.BACKUP-<timestamp>)")
		}})
	if err != nil {
		return err
	}
	c := tool.c
	paths := c.LocationsPaths()
	failed := eachDirectory(context.Background(), "rebuild", paths, stderr, func(i int, prefix string) error {
		fmt.Fprintf(stderr, "%s: scanning the entry logs of %s\n", prefix, c.LedgerDirectories[i])
		due := progressThrottle()
		res, err := rebuild.LocationsIndex(rebuild.Options{
			LedgerDir: c.LedgerDirectories[i],
			IndexDir:  c.IndexDirectories[i],
			Engine:    tool.engine,
			Logger:    tool.log,

			RebuildLedgersIndex: rebuildLedgers,
			Progress: func(p rebuild.Progress) {
				if !due(p.LogsDone >= p.Logs) {
					return
				}
				fmt.Fprintf(stderr, "%s: %d/%d entry logs scanned (last %x.log), %d records, %d to index, %s\n",
					prefix, p.LogsDone, p.Logs, p.LogID, p.Records, p.Indexed, p.Elapsed.Round(time.Millisecond))
			},
		})
		if err != nil {
			return inUse(err)
		}
		for _, torn := range res.TornLogs {
			fmt.Fprintf(stderr, "%s: warning: %s\n", prefix, torn)
		}
		backup := "none (there was no index)"
		if res.BackupPath != "" {
			backup = res.BackupPath
		}
		if res.OldIndexError != nil {
			fmt.Fprintf(stderr, "%s: warning: the old index could not be read (%v); it is kept at %s\n", prefix, res.OldIndexError, backup)
		}
		if res.FewerEntries() {
			fmt.Fprintf(stderr, "%s: warning: the new index holds %d entries, %d fewer than the old one, which is kept at %s: "+
				"check the ledgers index (bookie-index check-ledgers-index) before removing it\n", prefix, res.Entries, res.OldEntries-res.Entries, backup)
		}
		if rebuildLedgers {
			old := "none (there was no ledgers index)"
			if res.LedgersBackupPath != "" {
				old = "kept at " + res.LedgersBackupPath
			}
			fmt.Fprintf(stderr, "%s: rebuilt the ledgers index with %d ledgers (fenced, no master key); old ledgers index: %s\n", prefix, res.Ledgers, old)
		}
		fmt.Fprintf(stderr, "%s: done in %s: %d entry logs, %d records, %d entries of %d ledgers in %d tables (%d sorted runs); old index: %s\n",
			prefix, res.Duration.Round(time.Millisecond), res.Logs, res.Records, res.Entries, res.Ledgers, res.Tables, res.Runs, backup)
		return nil
	})
	return directoriesFailed(failed, len(paths))
}
