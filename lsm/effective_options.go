package lsm

import (
	"fmt"
	"time"
)

// Setting is one effective engine option of an open DB, for start-up logs
// and the admin API.
type Setting struct {
	Name, Value string
}

// Settings returns the options the open DB runs with, defaults filled in,
// in a fixed order: what was asked for may differ (a default, a RocksDB
// OPTIONS value clipped, a block cache shared by several DBs, whose
// capacity is given).
func (d *DB) Settings() []Setting {
	o := d.opts
	s := func(name string, v any) Setting { return Setting{name, fmt.Sprint(v)} }
	return []Setting{
		s("writeBufferSize", o.WriteBufferSize),
		s("maxWriteBufferNumber", o.MaxWriteBufferNumber),
		s("numLevels", o.NumLevels),
		s("level0FileNumCompactionTrigger", o.Level0FileNumCompactionTrigger),
		s("level0SlowdownWritesTrigger", o.Level0SlowdownWritesTrigger),
		s("level0StopWritesTrigger", o.Level0StopWritesTrigger),
		s("maxBytesForLevelBase", o.MaxBytesForLevelBase),
		s("maxBytesForLevelMultiplier", o.MaxBytesForLevelMultiplier),
		s("targetFileSizeBase", o.TargetFileSizeBase),
		s("dynamicLevelBytes", !o.StaticLevelBytes),
		s("idleCompactionDelay", idleDelay(o.IdleCompactionDelay)),
		s("maxBackgroundJobs", o.MaxBackgroundJobs),
		s("maxSubcompactions", o.MaxSubcompactions),
		s("maxOpenFiles", o.MaxOpenFiles),
		s("maxManifestFileSize", o.MaxManifestFileSize),
		s("walRecoveryMode", o.WALRecoveryMode),
		s("blockSize", o.BlockSize),
		s("blockRestartInterval", o.BlockRestartInterval),
		s("indexBlockRestartInterval", o.IndexBlockRestartInterval),
		s("metadataBlockSize", o.MetadataBlockSize),
		s("tableLayout", o.TableLayout),
		s("bloomBitsPerKey", o.BloomBitsPerKey),
		s("compression", o.Compression),
		s("commonPrefix", !o.DisableCommonPrefix),
		s("blockCacheCapacity", d.cache.Metrics().Capacity),
		s("blockCacheShared", o.BlockCache != nil),
		s("blockCacheHighPriorityRatio", o.BlockCacheHighPriorityRatio),
		s("enableStatistics", o.EnableStatistics),
	}
}

// idleDelay spells IdleCompactionDelay: "off" when negative.
func idleDelay(d time.Duration) string {
	if d < 0 {
		return "off"
	}
	return d.String()
}
