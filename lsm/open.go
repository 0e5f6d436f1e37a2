package lsm

import (
	"context"
	"sort"
	"sync"

	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// Open opens the DB in dir, creating it if it does not exist (unless
// ReadOnly). nil opts means DefaultOptions(). Recovery replays the WALs
// the manifest has not absorbed. A torn tail (bytes after the last
// completed sync, as the WAL's synced-length mark proves) is dropped with a
// WARN; damage within synced bytes fails Open with an error marked
// ErrCorruption naming the file and offset, unless Options.WALRecoveryMode
// says otherwise. A WAL that does not replay to its end is never deleted
// (see lost/ in the package documentation). The recovered data is flushed
// to an L0 table (once L0 is below Level0StopWritesTrigger, as for any new
// L0 table) before Open returns.
func Open(dir string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.Logger = dbLogger(o.Logger, dir)
	if o.NumLevels > manifest.NumLevels {
		return nil, errors.Newf("lsm: NumLevels %d is above the %d levels this version supports", o.NumLevels, manifest.NumLevels)
	}
	d := &DB{dir: dir, opts: &o, fs: o.FS, tableOpts: o.TableOptions()}
	d.getScratch.New = d.newGetScratch
	d.lastInRangePool.New = d.newLastInRangeScratch
	d.merge = newMerger(&o, &d.metrics)
	d.mu.cond.L = &d.mu.Mutex
	d.published = sync.NewCond(&d.publishMu)
	d.mu.snapshots = make(map[*Snapshot]struct{})
	d.bgCtx, d.bgCancel = context.WithCancel(context.Background())
	if o.BlockCache != nil {
		d.cache = o.BlockCache.c
	} else {
		c, err := cache.New(cache.Options{Capacity: o.BlockCacheSize, NumShardBits: o.BlockCacheNumShardBits, HighPriorityPoolRatio: o.BlockCacheHighPriorityRatio})
		if err != nil {
			return nil, errors.Wrap(err, "lsm: block cache")
		}
		d.cache, d.ownsCache = c, true
	}
	d.tableCache = newTableCache(d.fs, dir, sstable.ReaderOptions{Cache: d.cache, AlwaysLoadFilters: o.AlwaysLoadFilters}, max(o.MaxOpenFiles, 0))
	if err := d.open(); err != nil {
		d.tableCache.close()
		if d.ownsCache {
			_ = d.cache.Close()
		}
		if d.mu.versions != nil {
			_ = d.mu.versions.Close()
		}
		if d.lock != nil {
			_ = d.lock.Close()
		}
		return nil, err
	}
	return d, nil
}

func (d *DB) open() error {
	fs, dir := d.fs, d.dir
	if !d.opts.ReadOnly {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return errors.Wrapf(err, "lsm: creating %s", dir)
		}
		lock, err := fs.Lock(manifest.FilePath(dir, manifest.FileKindLock, 0))
		if err != nil {
			return errors.Wrapf(err, "lsm: locking %s", dir)
		}
		d.lock = lock
	}
	mopts := &manifest.Options{MaxManifestSize: d.opts.MaxManifestFileSize, ReadOnly: d.opts.ReadOnly}
	var err error
	if _, statErr := fs.Stat(manifest.FilePath(dir, manifest.FileKindCurrent, 0)); statErr == nil {
		d.mu.versions, err = manifest.Recover(fs, dir, mopts)
	} else if d.opts.ReadOnly {
		return errors.Newf("lsm: %s is not a database (no CURRENT file)", dir)
	} else {
		d.mu.versions, err = manifest.Create(fs, dir, mopts)
	}
	if err != nil {
		return err
	}
	vs := d.mu.versions
	d.logManifestRecovery(vs.RecoveryInfo())
	if err := d.checkMergeOperator(); err != nil {
		return err
	}

	// Replay the WALs at or after the manifest's log number, in order.
	names, err := fs.List(dir)
	if err != nil {
		return errors.Wrapf(err, "lsm: listing %s", dir)
	}
	var wals []uint64
	for _, name := range names {
		if kind, num, ok := manifest.ParseFileName(name); ok && kind == manifest.FileKindLog {
			vs.MarkFileNumUsed(num)
			if num >= vs.LogNumber() {
				wals = append(wals, num)
			}
		}
	}
	sort.Slice(wals, func(i, j int) bool { return wals[i] < wals[j] })
	maxSeq := vs.LastSeqNum()
	var recovered []*memTable
	mem, maxSeq, keep, err := d.replayWALs(wals, d.newMemTable(d.opts.WriteBufferSize, 0), &recovered, maxSeq)
	if err != nil {
		return err
	}
	if !mem.empty() {
		recovered = append(recovered, mem)
	}
	d.mu.nextSeq = maxSeq + 1
	d.visibleSeq.Store(uint64(maxSeq))
	vs.SetLastSeqNum(maxSeq)

	if d.opts.ReadOnly {
		// Serve the recovered memtables from memory; write nothing.
		d.mu.mem = d.newMemTable(64<<10, 0)
		d.mu.imm = recovered
		d.mu.Lock()
		d.updateReadStateLocked()
		d.mu.Unlock()
		return nil
	}

	// WALs that did not replay to their end are kept: linked into lost/
	// before the edit below makes them obsolete.
	if err := manifest.KeepInLost(fs, dir, keep, true /* link */); err != nil {
		return err
	}

	// Flush what the WALs held, start a new WAL, and record both: the old
	// WALs are then obsolete. Like any new L0 table, the flush first waits
	// for L0 to be below the stop trigger (see waitForL0RoomLocked).
	if err := d.waitForL0RoomAtOpen(recovered); err != nil {
		return err
	}
	edit := &manifest.VersionEdit{}
	for _, m := range recovered {
		meta, err := d.writeL0Table(m)
		if err != nil {
			return err
		}
		if meta != nil {
			edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: 0, Meta: meta})
		}
	}
	walNum := vs.NextFileNum()
	w, err := d.createWAL(walNum)
	if err != nil {
		return err
	}
	edit.LogNumber = walNum
	edit.NextFileNum = walNum + 1
	edit.LastSeqNum = maxSeq
	if err := vs.LogAndApply(edit); err != nil {
		// The new WAL holds nothing: remove it, so that it does not stand
		// behind the replayed WALs as a newer one at the next open.
		_ = w.Close()
		_ = d.fs.Remove(manifest.FilePath(d.dir, manifest.FileKindLog, walNum))
		_ = d.fs.Remove(manifest.FilePath(d.dir, manifest.FileKindSyncedLength, walNum))
		return err
	}
	d.mu.Lock()
	d.mu.mem = d.newMemTable(d.opts.WriteBufferSize, walNum)
	d.mu.wal = w
	d.updateReadStateLocked()
	d.mu.Unlock()
	d.deleteObsoleteFiles(true /* atOpen */)
	d.mu.Lock()
	d.mu.openFlush = false
	d.maybeScheduleCompactionLocked()
	d.mu.Unlock()
	return nil
}

// deleteObsoleteFiles removes obsolete tables and WALs; at open, also
// leftovers of interrupted flushes and compactions.
func (d *DB) deleteObsoleteFiles(atOpen bool) {
	if d.opts.ReadOnly {
		return
	}
	vs := d.mu.versions
	for _, t := range vs.TakeObsoleteTables() {
		d.tableCache.evict(t.FileNum)
		d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum))
	}
	names, err := d.fs.List(d.dir)
	if err != nil {
		return
	}
	logNum := vs.LogNumber()
	manifestNum := vs.ManifestFileNum()
	var live map[uint64]bool
	var lost []string
	if atOpen {
		live = vs.LiveTables()
	}
	for _, name := range names {
		kind, num, ok := manifest.ParseFileName(name)
		switch {
		case !ok:
			// Not ours, or the manifest's temp files (Recover cleans those).
		case kind == manifest.FileKindLog && num < logNum:
			d.removeFile(manifest.FilePath(d.dir, kind, num))
		case kind == manifest.FileKindSyncedLength && num < logNum && num != manifestNum:
			// The synced length of a removed WAL (or old manifest).
			d.removeFile(manifest.FilePath(d.dir, kind, num))
		case atOpen && kind == manifest.FileKindTable && !live[num]:
			// Not referenced by the recovered version, nor by the tables
			// the recovery flush added. If the manifest proved it holds
			// every edit that took effect, the table is the output of a
			// flush or compaction that never finished, or one whose
			// deletion a crash interrupted: garbage. Otherwise (Recover
			// moved such tables to lost/ already, so this is a defence)
			// it is kept.
			if vs.RecoveryInfo().Complete {
				d.opts.Logger.Info("lsm: removing a table no version references (output of a flush or compaction that did not finish, or already obsolete)",
					"table", name)
				d.removeFile(manifest.FilePath(d.dir, kind, num))
			} else {
				lost = append(lost, name)
			}
		}
	}
	if len(lost) > 0 {
		for _, name := range lost {
			d.opts.Logger.Warn("lsm: moved a table no version references to lost/ (the manifest cannot prove it obsolete)",
				"table", name, "kept", manifest.LostPath(d.dir, name))
		}
		if err := manifest.KeepInLost(d.fs, d.dir, lost, false /* link */); err != nil {
			d.opts.Logger.Warn("lsm: could not move tables to lost/; they stay in place", "err", err)
		}
	}
}

func (d *DB) removeFile(path string) {
	if err := d.fs.Remove(path); err != nil {
		d.opts.Logger.Warn("lsm: could not remove an obsolete file", "file", path, "err", err)
		return
	}
	d.metrics.filesDeleted.Add(1)
}
