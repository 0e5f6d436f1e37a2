package bookie

import (
	"time"

	"github.com/cockroachdb/errors"
)

// Defaults of entry-log garbage collection, upstream's.
const (
	DefaultMinorCompactionThreshold = 0.2
	DefaultMinorCompactionInterval  = time.Hour
	DefaultMajorCompactionThreshold = 0.8
	DefaultMajorCompactionInterval  = 24 * time.Hour
	// DefaultCompactionRateByEntries and DefaultCompactionRateByBytes
	// are per second.
	DefaultCompactionRateByEntries = 1000
	DefaultCompactionRateByBytes   = 1000000
	// DefaultMetadataCacheBytes is GCOptions.MetadataCacheBytes' default.
	DefaultMetadataCacheBytes = 64 << 20
)

// GCOptions configure entry-log garbage collection (upstream's
// GarbageCollectorThread settings). Zero fields mean their defaults;
// negative thresholds and intervals disable that kind of compaction, as
// upstream's 0 or less does (package conf fills a GCOptions from the
// file's keys, mapping those values).
type GCOptions struct {
	// MinorCompactionThreshold (minorCompactionThreshold): a minor
	// compaction rewrites the logs whose live fraction is below it.
	// Default 0.2; at most 1.
	MinorCompactionThreshold float64
	// MinorCompactionInterval (minorCompactionInterval): the time between
	// minor compactions; at least GCWaitTime. Default 1 hour.
	MinorCompactionInterval time.Duration
	// MajorCompactionThreshold and MajorCompactionInterval: the same for
	// major compactions. Default 0.8 and 1 day.
	MajorCompactionThreshold float64
	MajorCompactionInterval  time.Duration
	// MinorCompactionMaxTime and MajorCompactionMaxTime
	// (minor/majorCompactionMaxTimeMillis) bound a compaction's time: no
	// log is started after it, and the one in progress stops at its next
	// chunk. Zero or negative: no bound (upstream's -1).
	MinorCompactionMaxTime, MajorCompactionMaxTime time.Duration
	// CompactionRateByEntries and CompactionRateByBytes
	// (compactionRateByEntries, compactionRateByBytes) throttle the
	// copying, per second; ThrottleByBytes (isThrottleByBytes) picks the
	// byte rate. Negative: no throttle.
	CompactionRateByEntries int
	CompactionRateByBytes   int64
	ThrottleByBytes         bool

	// Disk-pressure rules, upstream's, checked at each periodic cycle
	// against the storage's thresholds (Options.DiskUsageThreshold and
	// DiskUsageWarnThreshold, which the read-only mode uses too): above
	// the warn threshold major compaction is suspended, above the
	// threshold minor too; with ForceGCAllowWhenNoSpace
	// (isForceGCAllowWhenNoSpace) the cycle is forced instead.
	ForceGCAllowWhenNoSpace bool
	// ForceAllowCompaction (forceAllowCompaction): a forced cycle (ForceGC)
	// runs a kind of compaction whose interval disables it, as long as its
	// threshold is in (0, 1) (upstream's isForceMinor/MajorCompactionAllow).
	ForceAllowCompaction bool
	// UseTargetEntryLogSizeForGc (useTargetEntryLogSizeForGc): a log's
	// live fraction, for the thresholds, is its live bytes over the larger
	// of its size and the target size (logSizeLimit), so that small logs
	// (rotated early, by a restart) are compacted sooner, as upstream.
	UseTargetEntryLogSizeForGc bool
	// MetadataCacheBytes bounds the memory the collector keeps of each
	// rotated log's live ledgers (16 bytes a pair); past it a log keeps
	// only its size and live bytes, and its ledgers map is read back
	// from disk at the cycles after a purge. Ours; default
	// DefaultMetadataCacheBytes; negative: keep none.
	MetadataCacheBytes int64
}

// gcSettings are GCOptions resolved: what is enabled, with its bounds.
type gcSettings struct {
	minor, major compactionSettings
	// targetSize, if positive, is the size a log's live bytes are
	// divided by when it is larger than the log (UseTargetEntryLogSizeForGc).
	targetSize int64
	// rate is entries or bytes per second, 0 for none.
	rate            float64
	throttleByBytes bool
}

// compactionSettings are one kind of compaction's (minor, major).
type compactionSettings struct {
	// enabled: the periodic cycles run it, every interval.
	enabled bool
	// forceAllowed: a forced cycle may run it even when its interval
	// disables it (ForceAllowCompaction).
	forceAllowed bool
	// threshold: it rewrites the logs whose live fraction is below it.
	threshold float64
	interval  time.Duration
	// maxTime, if positive, bounds a compaction's time.
	maxTime time.Duration
}

// resolveGC fills GCOptions' defaults and checks them as upstream's
// GarbageCollectorThread does, with its messages.
func resolveGC(o GCOptions, gcWaitTime time.Duration) (gcSettings, error) {
	orDefault(&o.MinorCompactionThreshold, DefaultMinorCompactionThreshold)
	orDefault(&o.MajorCompactionThreshold, DefaultMajorCompactionThreshold)
	orDefault(&o.MinorCompactionInterval, DefaultMinorCompactionInterval)
	orDefault(&o.MajorCompactionInterval, DefaultMajorCompactionInterval)
	orDefault(&o.CompactionRateByEntries, DefaultCompactionRateByEntries)
	orDefault(&o.CompactionRateByBytes, DefaultCompactionRateByBytes)
	s := gcSettings{
		minor: compactionSettings{threshold: o.MinorCompactionThreshold, interval: o.MinorCompactionInterval,
			maxTime: max(o.MinorCompactionMaxTime, 0)},
		major: compactionSettings{threshold: o.MajorCompactionThreshold, interval: o.MajorCompactionInterval,
			maxTime: max(o.MajorCompactionMaxTime, 0)},
		throttleByBytes: o.ThrottleByBytes,
	}
	for _, k := range []struct {
		name string
		*compactionSettings
	}{{"minor", &s.minor}, {"major", &s.major}} {
		// A forced cycle may run a kind its interval disables.
		k.forceAllowed = o.ForceAllowCompaction && k.threshold > 0 && k.threshold < 1
		if k.interval <= 0 || k.threshold <= 0 {
			continue // disabled
		}
		if k.threshold > 1 {
			return s, errors.Wrapf(ErrInvalidArgument, "bookie: Invalid %s compaction threshold %v", k.name, k.threshold)
		}
		if gcWaitTime > 0 && k.interval < gcWaitTime {
			return s, errors.Wrapf(ErrInvalidArgument, "bookie: Too short %s compaction interval : %d ms (gcWaitTime %d ms)", k.name, k.interval.Milliseconds(), gcWaitTime.Milliseconds())
		}
		k.enabled = true
	}
	if s.minor.enabled && s.major.enabled && (o.MinorCompactionInterval >= o.MajorCompactionInterval || o.MinorCompactionThreshold >= o.MajorCompactionThreshold) {
		return s, errors.Wrapf(ErrInvalidArgument, "bookie: Invalid minor/major compaction settings : minor (%v, %d ms), major (%v, %d ms)",
			o.MinorCompactionThreshold, o.MinorCompactionInterval.Milliseconds(), o.MajorCompactionThreshold, o.MajorCompactionInterval.Milliseconds())
	}
	if o.ThrottleByBytes {
		s.rate = float64(max(o.CompactionRateByBytes, 0))
	} else {
		s.rate = float64(max(o.CompactionRateByEntries, 0))
	}
	return s, nil
}

// throttler paces compaction's copying at a rate of units (entries or
// bytes) per second (upstream's AbstractLogCompactor.Throttler).
type throttler struct {
	rate  float64
	start time.Time
	done  float64
}

// wait accounts n units and sleeps until the rate allows them, or until
// stop is closed.
func (t *throttler) wait(n int, stop <-chan struct{}) {
	if t.rate <= 0 {
		return
	}
	if t.start.IsZero() {
		t.start = time.Now()
	}
	t.done += float64(n)
	due := t.start.Add(time.Duration(t.done / t.rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-stop:
		}
	}
}
