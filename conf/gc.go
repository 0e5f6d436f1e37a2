package conf

import (
	"strconv"
	"time"

	"github.com/cockroachdb/errors"
)

// GCConfig is entry-log garbage collection and compaction (upstream's
// GarbageCollectorThread keys). A threshold or an interval of 0 or less
// disables that kind of compaction, as upstream.
type GCConfig struct {
	// MinorCompactionThreshold (minorCompactionThreshold): logs whose live
	// fraction is below it are rewritten by a minor compaction. Default
	// 0.2; at most 1.
	MinorCompactionThreshold float64
	// MinorCompactionInterval (minorCompactionInterval, seconds): time
	// between minor compactions; at least gcWaitTime. Default 3600.
	MinorCompactionInterval time.Duration
	// MajorCompactionThreshold, MajorCompactionInterval: the same for
	// major compactions. Default 0.8 and 86400 seconds.
	MajorCompactionThreshold float64
	MajorCompactionInterval  time.Duration
	// MinorCompactionMaxTime, MajorCompactionMaxTime
	// (minor/majorCompactionMaxTimeMillis): a compaction's time bound; -1
	// or 0: none. Default -1.
	MinorCompactionMaxTime, MajorCompactionMaxTime time.Duration
	// CompactionRateByEntries (compactionRateByEntries) and
	// CompactionRateByBytes (compactionRateByBytes): how fast compaction
	// copies, per second; IsThrottleByBytes (isThrottleByBytes) picks the
	// byte rate. Defaults 1000, 1000000, false.
	CompactionRateByEntries int
	CompactionRateByBytes   int64
	IsThrottleByBytes       bool
	// IsForceGCAllowWhenNoSpace (isForceGCAllowWhenNoSpace): a disk above
	// DiskUsageWarnThreshold forces garbage collection instead of
	// suspending compactions. Default false.
	IsForceGCAllowWhenNoSpace bool
	// DiskUsageThreshold (diskUsageThreshold) and DiskUsageWarnThreshold
	// (diskUsageWarnThreshold): the used fractions of a ledger disk above
	// which minor and major compaction are suspended. Defaults 0.95 and
	// 0.90; in (0, 1), warn at most the threshold.
	DiskUsageThreshold, DiskUsageWarnThreshold float64
}

// gcKeySpecs are the garbage collector's keys, in bk_server.conf order.
func gcKeySpecs() []keySpec {
	return []keySpec{
		floatKey("minorCompactionThreshold", "0.2", func(c *Config) *float64 { return &c.GC.MinorCompactionThreshold }),
		durationKey("minorCompactionInterval", "3600", time.Second, func(c *Config) *time.Duration { return &c.GC.MinorCompactionInterval }),
		durationKey("minorCompactionMaxTimeMillis", "-1", time.Millisecond, func(c *Config) *time.Duration { return &c.GC.MinorCompactionMaxTime }),
		floatKey("majorCompactionThreshold", "0.8", func(c *Config) *float64 { return &c.GC.MajorCompactionThreshold }),
		durationKey("majorCompactionInterval", "86400", time.Second, func(c *Config) *time.Duration { return &c.GC.MajorCompactionInterval }),
		durationKey("majorCompactionMaxTimeMillis", "-1", time.Millisecond, func(c *Config) *time.Duration { return &c.GC.MajorCompactionMaxTime }),
		intKey("compactionRateByEntries", "1000", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.GC.CompactionRateByEntries }),
		intKey("compactionRateByBytes", "1000000", -(1 << 62), 1<<62, func(c *Config) *int64 { return &c.GC.CompactionRateByBytes }),
		boolKey("isThrottleByBytes", "false", func(c *Config) *bool { return &c.GC.IsThrottleByBytes }),
		boolKey("isForceGCAllowWhenNoSpace", "false", func(c *Config) *bool { return &c.GC.IsForceGCAllowWhenNoSpace }),
		floatKey("diskUsageThreshold", "0.95", func(c *Config) *float64 { return &c.GC.DiskUsageThreshold }),
		floatKey("diskUsageWarnThreshold", "0.90", func(c *Config) *float64 { return &c.GC.DiskUsageWarnThreshold }),
	}
}

// floatKey is a decimal number key.
func floatKey(name, def string, field func(*Config) *float64) keySpec {
	return keySpec{
		name: name,
		def:  def,
		decode: func(c *Config, value string) error {
			f, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return errors.New("is not a number")
			}
			*field(c) = f
			return nil
		},
		encode: func(c *Config) string { return strconv.FormatFloat(*field(c), 'g', -1, 64) },
	}
}

// validate checks the garbage collector's keys as upstream's
// GarbageCollectorThread does, with its messages.
func (g *GCConfig) validate(gcWaitTime time.Duration) error {
	if t, w := g.DiskUsageThreshold, g.DiskUsageWarnThreshold; t <= 0 || t >= 1 || w <= 0 || w-t > 1e-6 {
		return errors.Newf("diskUsageThreshold/diskUsageWarnThreshold: %v and %v are not valid: both in (0, 1), the warn threshold at most the threshold (upstream: \"Disk space threshold ... are not valid\")", t, w)
	}
	minor := g.MinorCompactionInterval > 0 && g.MinorCompactionThreshold > 0
	major := g.MajorCompactionInterval > 0 && g.MajorCompactionThreshold > 0
	if minor {
		if g.MinorCompactionThreshold > 1 {
			return errors.Newf("minorCompactionThreshold: %v is above 1 (upstream: \"Invalid minor compaction threshold\")", g.MinorCompactionThreshold)
		}
		if g.MinorCompactionInterval < gcWaitTime {
			return errors.Newf("minorCompactionInterval: %d seconds is shorter than gcWaitTime (%d ms) (upstream: \"Too short minor compaction interval\")",
				int64(g.MinorCompactionInterval/time.Second), gcWaitTime.Milliseconds())
		}
	}
	if major {
		if g.MajorCompactionThreshold > 1 {
			return errors.Newf("majorCompactionThreshold: %v is above 1 (upstream: \"Invalid major compaction threshold\")", g.MajorCompactionThreshold)
		}
		if g.MajorCompactionInterval < gcWaitTime {
			return errors.Newf("majorCompactionInterval: %d seconds is shorter than gcWaitTime (%d ms) (upstream: \"Too short major compaction interval\")",
				int64(g.MajorCompactionInterval/time.Second), gcWaitTime.Milliseconds())
		}
	}
	if minor && major && (g.MinorCompactionInterval >= g.MajorCompactionInterval || g.MinorCompactionThreshold >= g.MajorCompactionThreshold) {
		return errors.Newf("minorCompactionThreshold/minorCompactionInterval: minor (%v, %d s) must be below major (%v, %d s) (upstream: \"Invalid minor/major compaction settings\")",
			g.MinorCompactionThreshold, int64(g.MinorCompactionInterval/time.Second), g.MajorCompactionThreshold, int64(g.MajorCompactionInterval/time.Second))
	}
	return nil
}
