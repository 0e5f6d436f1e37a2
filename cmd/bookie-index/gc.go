package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/cockroachdb/errors"
)

// runGC runs one garbage-collection cycle of every ledger directory,
// offline, with a progress line per log removed or compacted on stderr.
func runGC(args []string, stdout, stderr io.Writer) error {
	var major, minor bool
	c, err := loadConfigCommand("gc", "Runs one forced garbage-collection cycle of every ledger directory, offline: stop\n"+
		"'bookie-index serve' first. Deleted ledgers' locations are purged, entry logs\n"+
		"left with no live ledger are removed, then the logs whose live fraction is below\n"+
		"the major threshold (or, with --minor, the minor one) are compacted, throttled by\n"+
		"compactionRateByEntries/Bytes.", args, stderr,
		commandFlags{synopsis: "[--major|--minor]", register: func(fs *flag.FlagSet) {
			fs.BoolVar(&major, "major", false, "run only a major compaction (majorCompactionThreshold)")
			fs.BoolVar(&minor, "minor", false, "run only a minor compaction (minorCompactionThreshold)")
		}})
	if err != nil {
		return err
	}
	if major && minor {
		return usageErrorf("--major and --minor exclude each other")
	}
	log, err := newLogger(c, stderr, slog.LevelWarn)
	if err != nil {
		return err
	}
	opts, _, err := storageOptions(c, log)
	if err != nil {
		return err
	}
	opts.FlushInterval = -1 // no background work: this command runs the cycle
	// Behind its journals: their adds reach the storage (and a deleted
	// ledger's record stays until a recorded checkpoint covers it).
	storage, err := openJournaled(c, opts, log)
	if err != nil {
		return inUse(err)
	}
	req := bookie.GCRequest{Force: true, SkipMajor: minor, SkipMinor: major}
	dirs := storage.Dirs()
	paths := make([]string, len(dirs))
	for i, d := range dirs {
		paths[i] = d.LedgerDir()
	}
	failed := eachDirectory(context.Background(), "gc", paths, stderr, func(i int, prefix string) error {
		start := time.Now()
		req.Progress = func(p bookie.GCProgress) {
			what := "removed dead entry log"
			if p.CompactionActive != "" {
				what = p.CompactionActive + " compaction: compacted entry log"
			}
			fmt.Fprintf(stderr, "%s: %s %x.log (%d/%d), %d bytes reclaimed, %s\n", prefix, what, p.LogID, p.Done, p.Total,
				p.ReclaimedBytes, time.Since(start).Round(time.Millisecond))
		}
		res, err := dirs[i].RunGC(req)
		if err != nil {
			return err
		}
		kind := "no compaction"
		switch {
		case res.Major:
			kind = "major compaction"
		case res.Minor:
			kind = "minor compaction"
		}
		fmt.Fprintf(stdout, "%s: done in %s: %d dead entry logs removed (%d bytes), %s: %d logs compacted (%d bytes); %d rotated logs left, %d bytes\n",
			prefix, time.Since(start).Round(time.Millisecond), res.RemovedLogs, res.ReclaimedDeletionBytes, kind,
			res.CompactedLogs, res.ReclaimedCompactionBytes, res.ActiveLogs, res.ActiveBytes)
		return nil
	})
	if err := storage.Close(); err != nil {
		return errors.Wrap(err, "closing the ledger storage")
	}
	return directoriesFailed(failed, len(dirs))
}
