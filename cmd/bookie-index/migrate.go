package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bookie-index/bookie-index/bookie/migrate"
	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/journal"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

const migrateHelp = `Converts the RocksDB indexes of a stopped BookKeeper bookie into this storage's,
for every directory of the configuration (<indexDir>/current/locations and
.../ledgers; docs/migration.md), then replays the bookie's journals
(journalDirectories) from its last log mark into the storage: a bookie that was
killed needs no restart under BookKeeper first. Stop the bookie first; the
entry logs stay where they are. The new indexes are
built beside the old ones, verified (locations per ledger, sampled lookups
against RocksDB), then switched in; the RocksDB databases are kept, unchanged,
as locations.rocksdb-backup and ledgers.rocksdb-backup. Locations of ledgers
the ledgers database no longer holds are dropped, as BookKeeper's next garbage
collection would. A second run has nothing to do; a run after a crash
finishes or restarts the migration. A directory a running storage holds is
refused. BookKeeper's lastId and lastMark files are kept as lastId.bookkeeper
and lastMark.bookkeeper (and its journal files are not removed) for a roll
back.

With --roll-back it undoes the migration, for BookKeeper to start on the
directories as they were when it switched: this storage's indexes, entry
logs, ledgers maps, LAYOUT and journal files are moved aside (what it accepted
since is lost for BookKeeper), the RocksDB backups renamed back, and
BookKeeper's lastId and lastMark files restored. It first checks that every
entry log BookKeeper's index names and the journal file its last log mark
names are still there (--force rolls back all the same).`

// runMigrate migrates every directory of the configuration, with
// progress lines on stderr and a summary per directory on stdout.
func runMigrate(args []string, stdout, stderr io.Writer) error {
	var clearLimbo, rollBack, force bool
	var samples int
	tool, err := loadOfflineTool("migrate", migrateHelp, args, stderr,
		commandFlags{synopsis: "[--clear-limbo] [--samples N] [--roll-back [--force]]", register: func(fs *flag.FlagSet) {
			fs.BoolVar(&clearLimbo, "clear-limbo", false, "migrate ledgers in limbo as ordinary ledgers (this storage has no limbo state; default: refuse the directory)")
			fs.IntVar(&samples, "samples", migrate.DefaultSamples, "locations looked up in both databases before the switch, or read from BookKeeper's entry logs before a roll back (negative: none)")
			fs.BoolVar(&rollBack, "roll-back", false, "undo the migration, for BookKeeper to start again (docs/migration.md)")
			fs.BoolVar(&force, "force", false, "with --roll-back: roll back even if BookKeeper would miss entry logs or journal files its kept state names")
		}})
	if err != nil {
		return err
	}
	if force && !rollBack {
		return &exitError{code: 2, err: errors.New("--force goes with --roll-back")}
	}
	if rollBack {
		return rollBackAll(tool, samples, force, stdout, stderr)
	}
	dirs := tool.c.IndexDirectories
	failed := eachDirectory(context.Background(), "migrate", dirs, stderr, func(i int, prefix string) error {
		due, phase := progressThrottle(), ""
		res, err := migrate.FromRocksDB(migrate.Options{
			IndexDir:   dirs[i],
			LedgerDir:  tool.c.LedgerDirectories[i],
			Engine:     tool.engine,
			ClearLimbo: clearLimbo,
			Samples:    samples,
			Logger:     tool.log,
			Progress: func(p migrate.Progress) {
				if !due(p.Phase != phase) {
					return
				}
				phase = p.Phase
				switch p.Phase {
				case "ledgers":
					fmt.Fprintf(stderr, "%s: reading the ledgers database: %d ledgers\n", prefix, p.Ledgers)
				case "locations":
					fmt.Fprintf(stderr, "%s: converting the locations: %d read, %d kept, %s\n", prefix, p.Locations, p.Kept, p.Elapsed.Round(time.Millisecond))
				case "verify":
					fmt.Fprintf(stderr, "%s: verifying %d locations of %d ledgers\n", prefix, p.Kept, p.Ledgers)
				case "switch":
					fmt.Fprintf(stderr, "%s: switching to the new indexes\n", prefix)
				}
			},
		})
		if err != nil {
			return err
		}
		switch {
		case res.NothingToDo:
			fmt.Fprintf(stdout, "%s: nothing to do: %s\n", prefix, res.Reason)
			return nil
		case res.Resumed:
			fmt.Fprintf(stdout, "%s: finished the switch an interrupted run had verified; RocksDB databases at %s and %s\n",
				prefix, res.LocationsBackupPath, res.LedgersBackupPath)
			return nil
		}
		for _, t := range res.Torn {
			fmt.Fprintf(stdout, "%s: warning: %s\n", prefix, t)
		}
		for _, k := range res.SkippedKeys {
			fmt.Fprintf(stdout, "%s: warning: location not migrated: %s\n", prefix, k)
		}
		if len(res.LimboCleared) > 0 {
			fmt.Fprintf(stdout, "%s: warning: %d ledgers in limbo migrated as ordinary ledgers\n", prefix, len(res.LimboCleared))
		}
		fmt.Fprintf(stdout, "%s: done in %s: %d ledgers (%d deleted dropped), %d locations in %d tables, %d locations of %d ledgers no longer held purged, %d skipped, %d verified by lookup; RocksDB databases at %s and %s\n",
			prefix, res.Duration.Round(time.Millisecond), res.Ledgers, res.DeletedLedgers, res.Entries, res.Tables,
			res.PurgedEntries, res.PurgedLedgers, res.Skipped, res.Verified, res.LocationsBackupPath, res.LedgersBackupPath)
		return nil
	})
	if failed > 0 {
		return directoriesFailed(failed, len(dirs))
	}
	return migrateJournals(tool, stdout)
}

// journalsToReplay reports whether a journal directory holds journal files
// or a ledger directory a last log mark (which then names a journal file
// the replay must find).
func journalsToReplay(c *conf.Config) (bool, error) {
	for _, d := range c.Journal.JournalDirectories {
		ids, err := journal.ListFiles(vfs.Default, d)
		if err != nil || len(ids) > 0 {
			return len(ids) > 0, err
		}
	}
	for _, d := range c.LedgerDirectories {
		names, err := filepath.Glob(filepath.Join(d, "current", "lastMark*"))
		if err != nil || len(names) > 0 {
			return len(names) > 0, err
		}
	}
	return false, nil
}

// migrateJournals replays the bookie's journals into the migrated storage
// (docs/migration.md, "The journal"): BookKeeper acknowledged the adds its
// journal holds past its last log mark, which its storage may lack (a
// bookie that was killed). It keeps BookKeeper's lastMark files
// (migrate.BackupLastMarks) and journal files, opens the storage behind
// the journals as serve does (the replay, then a checkpoint that records
// the new mark), and closes it.
func migrateJournals(tool *offlineTool, stdout io.Writer) error {
	c := tool.c
	dirs := strings.Join(c.Journal.JournalDirectories, ",")
	if found, err := journalsToReplay(c); err != nil {
		return errors.Wrap(err, "migrate: journal")
	} else if !found {
		fmt.Fprintf(stdout, "migrate journal %s: no journal file and no last log mark: nothing to replay\n", dirs)
		return nil
	}
	backups, err := migrate.BackupLastMarks(nil, c.LedgerDirectories)
	if err != nil {
		return errors.Wrap(err, "migrate: journal")
	}
	opts, _, err := storageOptions(c, tool.log)
	if err != nil {
		return err
	}
	opts.FlushInterval = -1 // no background work: the replay's checkpoint is all
	opts.GCWaitTime = -1
	jc := *c
	jc.Journal.MaxBackupJournals = 1 << 30 // BookKeeper's journal files stay, for a roll back
	storage, err := openJournaled(&jc, opts, tool.log)
	if err != nil {
		return errors.Wrap(err, "migrate: replaying the journals")
	}
	st := storage.Replayed()
	marks := storage.Journals().LastLogMarks()
	if err := storage.Close(); err != nil {
		return errors.Wrap(err, "migrate: closing the storage after the journal replay")
	}
	fmt.Fprintf(stdout, "migrate journal %s: replayed %d records: %d entries added, %d already held, %d master keys, fences and explicit LACs, "+
		"%d records of deleted ledgers and %d of unknown ledgers skipped; last log marks now %v",
		dirs, st.Records, st.EntriesAdded, st.EntriesHeld, st.MetaEntries,
		st.DeletedLedgerRecords, st.UnknownLedgerRecords, marks)
	if len(backups) > 0 {
		fmt.Fprintf(stdout, "; BookKeeper's kept as %s", strings.Join(backups, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}

// rollBackAll rolls every directory of the configuration back to
// BookKeeper, then, if all succeeded, the journal directories.
func rollBackAll(tool *offlineTool, samples int, force bool, stdout, stderr io.Writer) error {
	c := tool.c
	dirs := c.IndexDirectories
	failed := eachDirectory(context.Background(), "migrate --roll-back", dirs, stderr, func(i int, prefix string) error {
		res, err := migrate.RollBack(migrate.RollBackOptions{
			IndexDir:    dirs[i],
			LedgerDir:   c.LedgerDirectories[i],
			JournalDirs: c.Journal.JournalDirectories,
			Samples:     samples,
			Force:       force,
			Logger:      tool.log,
		})
		if err != nil {
			return err
		}
		if res.NothingToDo {
			fmt.Fprintf(stdout, "%s: nothing to do: %s\n", prefix, res.Reason)
			return nil
		}
		for _, p := range res.Problems {
			fmt.Fprintf(stdout, "%s: warning: rolled back all the same (--force): %s\n", prefix, p)
		}
		how := "rolled back"
		if res.Resumed {
			how = "finished the roll back an interrupted run had started"
		}
		fmt.Fprintf(stdout, "%s: %s in %s: %d entry logs of BookKeeper's checked, %d entries read back; restored %s; %d moved into %s\n",
			prefix, how, res.Duration.Round(time.Millisecond), res.EntryLogs, res.Verified, listOrNone(res.Restored), len(res.MovedAside), res.Aside)
		return nil
	})
	if failed > 0 {
		return errors.Newf("%d of %d directories failed (the journal directories were left alone): run it again once fixed", failed, len(dirs))
	}
	moved, err := migrate.RollBackJournals(nil, c.Journal.JournalDirectories)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrate --roll-back: journals %s: %d files of this storage's moved aside; start BookKeeper\n",
		strings.Join(c.Journal.JournalDirectories, ","), len(moved))
	return nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "nothing (BookKeeper had no lastId or lastMark here)"
	}
	return strings.Join(names, ", ")
}
