package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// compactProgressEvery is how often compact reports a compaction still
// running.
const compactProgressEvery = 5 * time.Second

// runCompact fully compacts the entry location index of every ledger
// directory, offline (the service must not be running on them), with a
// progress line per directory on stderr. SIGINT or SIGTERM cancels it.
func runCompact(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return compactAll(ctx, args, stderr, compactProgressEvery)
}

func compactAll(ctx context.Context, args []string, stderr io.Writer, progressEvery time.Duration) error {
	var dir string
	tool, err := loadOfflineTool("compact", "Fully compacts the entry location index of every ledger directory of the\n"+
		"configuration, offline: stop 'bookie-index serve' (or the bookie) first. With\n"+
		"--dir, only the index in DIR (an entry location index directory, such as\n"+
		"<indexDir>/current/locations), with the configuration's engine options.", args, stderr,
		commandFlags{synopsis: "[--dir DIR]", register: func(fs *flag.FlagSet) {
			fs.StringVar(&dir, "dir", "", "compact only the entry location index in this directory")
		}})
	if err != nil {
		return err
	}
	paths := tool.c.LocationsPaths()
	if dir != "" {
		paths = []string{dir}
	}
	failed := eachDirectory(ctx, "compact", paths, stderr, func(i int, prefix string) error {
		return compactOne(ctx, paths[i], tool.engine, tool.c.EnableStatistics, tool.log, stderr, prefix, progressEvery)
	})
	if ctx.Err() != nil {
		return errors.New("interrupted")
	}
	return directoriesFailed(failed, len(paths))
}

// compactOne compacts the index at path, printing where it starts, how it
// progresses and how it ends.
func compactOne(ctx context.Context, path string, engine *lsm.Options, stats bool, log *slog.Logger, out io.Writer, prefix string, progressEvery time.Duration) error {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errors.New("no entry location index here (nothing to compact)")
		}
		return err
	}
	ix, err := entrylocation.Open(path, &entrylocation.Options{Engine: engine, EnableStatistics: stats, Logger: log})
	if err != nil {
		return inUse(err)
	}
	before := ix.Metrics()
	tables, size := levelTotals(&before.Engine)
	fmt.Fprintf(out, "%s: compacting %d tables, %s\n", prefix, tables, formatBytes(size))

	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- ix.Compact(ctx) }()
	ticker := time.NewTicker(progressEvery)
	defer ticker.Stop()
waiting:
	for {
		select {
		case <-ticker.C:
			m := ix.Metrics()
			fmt.Fprintf(out, "%s: still compacting after %s, %s written\n", prefix,
				time.Since(start).Round(time.Second), formatBytes(uint64(max(m.Engine.CompactionBytesOut-before.Engine.CompactionBytesOut, 0))))
		case err = <-done:
			break waiting
		}
	}
	after := ix.Metrics()
	closeErr := ix.Close()
	if err != nil {
		return errors.CombineErrors(err, closeErr)
	}
	if closeErr != nil {
		return closeErr
	}
	tablesAfter, sizeAfter := levelTotals(&after.Engine)
	fmt.Fprintf(out, "%s: done in %s: %d tables, %s -> %d tables, %s; about %d entries\n", prefix,
		time.Since(start).Round(time.Millisecond), tables, formatBytes(size), tablesAfter, formatBytes(sizeAfter), after.EntriesCount)
	return nil
}

// levelTotals sums the tables and bytes of every level.
func levelTotals(m *lsm.Metrics) (tables int, bytes uint64) {
	for _, l := range m.Levels {
		tables += l.Tables
		bytes += l.Bytes
	}
	return tables, bytes
}

// formatBytes prints a size with a binary unit.
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
