package conf

import (
	"strconv"
	"time"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/cockroachdb/errors"
)

// gcKeySpecs are the garbage collector's keys (upstream's
// GarbageCollectorThread), in bk_server.conf order. They fill
// Config.GC, the storage's own bookie.GCOptions. A threshold, an interval
// or a rate of 0 or less disables that kind of compaction (or the
// throttle) in the file, as upstream; in bookie.GCOptions zero means the
// default and a negative value disables, so such values are stored as -1.
func gcKeySpecs() []keySpec {
	minorThreshold := func(c *Config) *float64 { return &c.GC.MinorCompactionThreshold }
	majorThreshold := func(c *Config) *float64 { return &c.GC.MajorCompactionThreshold }
	minorInterval := func(c *Config) *time.Duration { return &c.GC.MinorCompactionInterval }
	majorInterval := func(c *Config) *time.Duration { return &c.GC.MajorCompactionInterval }
	rateByEntries := func(c *Config) *int { return &c.GC.CompactionRateByEntries }
	rateByBytes := func(c *Config) *int64 { return &c.GC.CompactionRateByBytes }
	return []keySpec{
		disabledAtOrBelowZero(floatKey("minorCompactionThreshold", "0.2", minorThreshold), minorThreshold),
		disabledAtOrBelowZero(durationKey("minorCompactionInterval", "3600", time.Second, minorInterval), minorInterval),
		durationKey("minorCompactionMaxTimeMillis", "-1", time.Millisecond, func(c *Config) *time.Duration { return &c.GC.MinorCompactionMaxTime }),
		disabledAtOrBelowZero(floatKey("majorCompactionThreshold", "0.8", majorThreshold), majorThreshold),
		disabledAtOrBelowZero(durationKey("majorCompactionInterval", "86400", time.Second, majorInterval), majorInterval),
		durationKey("majorCompactionMaxTimeMillis", "-1", time.Millisecond, func(c *Config) *time.Duration { return &c.GC.MajorCompactionMaxTime }),
		// Empty, it takes compactionRate's value (Load), as upstream's
		// getCompactionRateByEntries falls back to the deprecated key.
		emptyAsZero(disabledAtOrBelowZero(intKey("compactionRateByEntries", "", -(1<<31), 1<<31-1, rateByEntries), rateByEntries), rateByEntries),
		intKey("compactionRate", "1000", -(1 << 31), 1<<31-1, func(c *Config) *int { return &c.CompactionRate }),
		disabledAtOrBelowZero(intKey("compactionRateByBytes", "1000000", -(1<<62), 1<<62, rateByBytes), rateByBytes),
		boolKey("isThrottleByBytes", "false", func(c *Config) *bool { return &c.GC.ThrottleByBytes }),
		boolKey("isForceGCAllowWhenNoSpace", "false", func(c *Config) *bool { return &c.GC.ForceGCAllowWhenNoSpace }),
		boolKey("forceAllowCompaction", "false", func(c *Config) *bool { return &c.GC.ForceAllowCompaction }),
		boolKey("useTargetEntryLogSizeForGc", "false", func(c *Config) *bool { return &c.GC.UseTargetEntryLogSizeForGc }),
		// The disk's thresholds, with the garbage collector's keys in the
		// file; the read-only mode uses them too (Config.DiskUsageThreshold).
		floatKey("diskUsageThreshold", "0.95", func(c *Config) *float64 { return &c.DiskUsageThreshold }),
		floatKey("diskUsageWarnThreshold", "0.90", func(c *Config) *float64 { return &c.DiskUsageWarnThreshold }),
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

// disabledAtOrBelowZero is the key k of field: a value of 0 or less, which
// disables in the file, is stored as -1, how bookie.GCOptions spells
// "disabled" (zero there means the default).
func disabledAtOrBelowZero[T ~int | ~int64 | ~float64](k keySpec, field func(*Config) *T) keySpec {
	decode := k.decode
	k.decode = func(c *Config, value string) error {
		if err := decode(c, value); err != nil {
			return err
		}
		if p := field(c); *p <= 0 {
			*p = -1
		}
		return nil
	}
	return k
}

// validateGC checks the garbage collector's keys as upstream's
// GarbageCollectorThread does, with its messages.
func validateGC(g *bookie.GCOptions, gcWaitTime time.Duration) error {
	var minor, major bool
	for _, k := range []struct {
		name      string
		threshold float64
		interval  time.Duration
		enabled   *bool
	}{
		{"minor", g.MinorCompactionThreshold, g.MinorCompactionInterval, &minor},
		{"major", g.MajorCompactionThreshold, g.MajorCompactionInterval, &major},
	} {
		if k.interval <= 0 || k.threshold <= 0 {
			continue // disabled
		}
		if k.threshold > 1 {
			return errors.Newf("%sCompactionThreshold: %v is above 1 (upstream: \"Invalid %s compaction threshold\")", k.name, k.threshold, k.name)
		}
		if k.interval < gcWaitTime {
			return errors.Newf("%sCompactionInterval: %d seconds is shorter than gcWaitTime (%d ms) (upstream: \"Too short %s compaction interval\")",
				k.name, int64(k.interval/time.Second), gcWaitTime.Milliseconds(), k.name)
		}
		*k.enabled = true
	}
	if minor && major && (g.MinorCompactionInterval >= g.MajorCompactionInterval || g.MinorCompactionThreshold >= g.MajorCompactionThreshold) {
		return errors.Newf("minorCompactionThreshold/minorCompactionInterval: minor (%v, %d s) must be below major (%v, %d s) (upstream: \"Invalid minor/major compaction settings\")",
			g.MinorCompactionThreshold, int64(g.MinorCompactionInterval/time.Second), g.MajorCompactionThreshold, int64(g.MajorCompactionInterval/time.Second))
	}
	return nil
}
