package main

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/cockroachdb/errors"
)

// storageOptions maps a configuration to the storage's options. The second
// result lists the engine settings that have no effect, one per line, for
// the caller to log.
func storageOptions(c *conf.Config, logger *slog.Logger) (*bookie.Options, []string, error) {
	engine, notes, err := c.EntryLocationOptions()
	if err != nil {
		return nil, nil, errors.Wrap(err, "entry location options")
	}
	throttle := c.MaxThrottleTime
	if throttle == 0 {
		throttle = -1 // 0 in the file: reject at once
	}
	return &bookie.Options{
		LedgerDirs:            c.LedgerDirectories,
		IndexDirs:             c.IndexDirectories,
		AllowStorageExpansion: c.AllowStorageExpansion,
		FlushInterval:         c.FlushInterval,
		GCWaitTime:            c.GCWaitTime,
		WriteCacheSize:        c.WriteCacheMaxSizeMB << 20,
		ReadCacheSize:         c.ReadAheadCacheMaxSizeMB << 20,
		MaxThrottleTime:       throttle,
		ReadAheadBatchSize:    c.ReadAheadCacheBatchSize,
		ReadAheadBatchBytes:   c.ReadAheadCacheBatchBytesSize,
		LogSizeLimit:          c.LogSizeLimit,
		FlushEntryLogBytes:    c.FlushEntrylogBytes,
		GC:                    c.GC,

		ReadOnlyModeDisabled:              !c.ReadOnlyModeEnabled,
		DiskUsageThreshold:                c.DiskUsageThreshold,
		DiskUsageWarnThreshold:            c.DiskUsageWarnThreshold,
		DiskUsageLwmThreshold:             c.DiskUsageLwmThreshold,
		DiskCheckInterval:                 c.DiskCheckInterval,
		MinUsableSizeForEntryLogCreation:  c.MinUsableSizeForEntryLogCreation,
		MinUsableSizeForIndexFileCreation: c.MinUsableSizeForIndexFileCreation,
		ReadOnlyOnlyWhenAllDisksFull:      !c.ReadOnlyModeOnAnyDiskFullEnabled,
		Index: &entrylocation.Options{
			Engine:           engine,
			MaxBatchOps:      c.MaxOperationNumbersInSingleRocksdbWriteBatch,
			EnableStatistics: c.EnableStatistics,
			LatencyRollover:  c.PrometheusStatsLatencyRollover,
			Logger:           logger,
		},
		RelocateCommand:  relocateCommand(c),
		LatencyRollover:  c.PrometheusStatsLatencyRollover,
		EnableStatistics: c.EnableStatistics,
		Logger:           logger,
	}, notes, nil
}

// relocateCommand is the relocate command for c, as the storage's refusal
// of moved directories names it: with c's file, so that it reads the
// directories the refused start was given; with the embedded file, the
// directories themselves (they came from --set or the environment).
func relocateCommand(c *conf.Config) string {
	if c.Source != "" && c.Source != conf.EmbeddedServerConfName {
		return "bookie-index relocate --conf " + shellQuote(c.Source)
	}
	cmd := "bookie-index relocate --set " + shellQuote("ledgerDirectories="+strings.Join(c.LedgerDirectories, ","))
	if len(c.IndexDirectories) > 0 && !slices.Equal(c.IndexDirectories, c.LedgerDirectories) {
		cmd += " --set " + shellQuote("indexDirectories="+strings.Join(c.IndexDirectories, ","))
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell if it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
