package main

import (
	"log/slog"

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
		LatencyRollover:  c.PrometheusStatsLatencyRollover,
		EnableStatistics: c.EnableStatistics,
		Logger:           logger,
	}, notes, nil
}
