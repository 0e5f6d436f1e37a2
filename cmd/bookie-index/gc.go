package main

import (
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
	fs := flag.NewFlagSet("gc", flag.ContinueOnError)
	var cf configFlags
	cf.register(fs)
	major := fs.Bool("major", false, "run only a major compaction (majorCompactionThreshold)")
	minor := fs.Bool("minor", false, "run only a minor compaction (minorCompactionThreshold)")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), "usage: bookie-index gc [--conf FILE] [--set key=value ...] [--major|--minor] [--log-level LEVEL] [--log-format text|json]\n\n"+
			"Runs one forced garbage-collection cycle of every ledger directory, offline: stop\n"+
			"'bookie-index serve' first. Deleted ledgers' locations are purged, entry logs\n"+
			"left with no live ledger are removed, then the logs whose live fraction is below\n"+
			"the major threshold (or, with --minor, the minor one) are compacted, throttled by\n"+
			"compactionRateByEntries/Bytes.\n\n")
		fs.PrintDefaults()
	}
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageErrorf("unexpected argument %q", pos[0])
	}
	if *major && *minor {
		return usageErrorf("--major and --minor exclude each other")
	}
	c, err := cf.load()
	if err != nil {
		return err
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
	storage, err := bookie.Open(opts)
	if err != nil {
		return inUse(errors.Wrap(err, "opening the ledger storage"))
	}
	req := bookie.GCRequest{Force: true, SkipMajor: *minor, SkipMinor: *major}
	failed := 0
	dirs := storage.Dirs()
	for i, d := range dirs {
		prefix := fmt.Sprintf("gc [%d/%d] %s", i+1, len(dirs), d.LedgerDir())
		start := time.Now()
		req.Progress = func(p bookie.GCProgress) {
			what := "removed dead entry log"
			if p.CompactionActive != "" {
				what = p.CompactionActive + " compaction: compacted entry log"
			}
			fmt.Fprintf(stderr, "%s: %s %x.log (%d/%d), %d bytes reclaimed, %s\n", prefix, what, p.LogID, p.Done, p.Total,
				p.ReclaimedBytes, time.Since(start).Round(time.Millisecond))
		}
		res, err := d.RunGC(req)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", prefix, err)
			failed++
			continue
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
	}
	if err := storage.Close(); err != nil {
		return errors.Wrap(err, "closing the ledger storage")
	}
	if failed > 0 {
		return errors.Newf("%d of %d directories failed", failed, len(dirs))
	}
	return nil
}
