package bookie

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

// diskPressureOf measures the disk of the directory's entry logs; when
// that fails (logged) the disk counts as writable.
func (d *DirStorage) diskPressureOf() diskPressure {
	o := d.opts
	u, err := o.FS.DiskUsage(d.ledgerDir)
	if err != nil {
		d.log.Warn("measuring the disk usage failed; garbage collection assumes the disk writable", "err", err)
		return pressureNone
	}
	switch used := u.UsedFraction(); {
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
