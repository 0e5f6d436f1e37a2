package bookie

import (
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Defaults of the disk-pressure rules, upstream's.
const (
	DefaultDiskUsageThreshold     = 0.95
	DefaultDiskUsageWarnThreshold = 0.90
)

// diskPressure is how full a ledger directory's disk is, as upstream's
// LedgerDirsMonitor tells its listeners.
type diskPressure int

const (
	pressureNone diskPressure = iota
	pressureWarn              // above DiskUsageWarnThreshold
	pressureFull              // above DiskUsageThreshold
)

func (p diskPressure) String() string {
	switch p {
	case pressureWarn:
		return "almost full"
	case pressureFull:
		return "full"
	}
	return "writable"
}

// resolveDisk fills the disk-pressure defaults and checks them as
// upstream's DiskChecker does.
func resolveDisk(o *GCOptions, fs vfs.FS) error {
	if o.DiskUsageThreshold == 0 {
		o.DiskUsageThreshold = DefaultDiskUsageThreshold
	}
	if o.DiskUsageWarnThreshold == 0 {
		o.DiskUsageWarnThreshold = DefaultDiskUsageWarnThreshold
	}
	if t, w := o.DiskUsageThreshold, o.DiskUsageWarnThreshold; t <= 0 || t >= 1 || w-t > 1e-6 {
		return errors.Wrapf(ErrInvalidArgument, "bookie: Disk space threshold: %v and warn threshold: %v are not valid. Should be > 0 and < 1 and diskSpaceThreshold >= diskSpaceWarnThreshold", t, w)
	}
	if o.MetadataCacheBytes == 0 {
		o.MetadataCacheBytes = DefaultMetadataCacheBytes
	}
	if o.DiskUsage == nil && ondisk.SameFS(fs, vfs.Default) {
		o.DiskUsage = osDiskUsage
	}
	return nil
}

// diskPressureOf measures the disk of the directory's entry logs; without
// a DiskUsage function, or when it fails (logged), the disk counts as
// writable.
func (d *DirStorage) diskPressureOf() diskPressure {
	o := &d.opts.GC
	if o.DiskUsage == nil {
		return pressureNone
	}
	used, err := o.DiskUsage(d.ledgerDir)
	if err != nil {
		d.log.Warn("measuring the disk usage failed; garbage collection assumes the disk writable", "err", err)
		return pressureNone
	}
	switch {
	case used > o.DiskUsageThreshold:
		return pressureFull
	case used > o.DiskUsageWarnThreshold:
		return pressureWarn
	}
	return pressureNone
}

// applyDiskPressure adjusts a periodic cycle as upstream's ledger-dirs
// listener adjusts the garbage collector: with ForceGCAllowWhenNoSpace a
// disk above the warn threshold forces the cycle (compactions run
// whatever their intervals); without it, major compaction is suspended
// above the warn threshold, and minor too above the threshold (so that
// compaction, which writes before it frees, does not fill the disk).
func (d *DirStorage) applyDiskPressure(req *GCRequest) {
	p := d.diskPressureOf()
	d.gc.pressure.Store(int32(p))
	if p == pressureNone {
		return
	}
	if d.opts.GC.ForceGCAllowWhenNoSpace {
		d.log.Info("disk almost full: forcing garbage collection (isForceGCAllowWhenNoSpace)", "disk", p.String())
		req.Force = true
		return
	}
	req.SkipMajor = true
	d.log.Info("Disk almost full, suspend major compaction to slow down filling disk.", "disk", p.String())
	if p == pressureFull {
		req.SkipMinor = true
		d.log.Info("Disk full, suspend minor compaction to slow down filling disk.")
	}
}
