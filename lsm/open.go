package lsm

import (
	"context"
	"io"
	"sort"
	"sync"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/batch"
	"github.com/bookie-index/bookie-index/lsm/internal/cache"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// Open opens the DB in dir, creating it if it does not exist (unless
// ReadOnly). nil opts means DefaultOptions(). Recovery replays the WALs
// the manifest has not absorbed: a torn tail (a write never acknowledged
// as synced) is dropped; corruption anywhere else fails Open with an error
// naming the file. The recovered data is flushed to an L0 table before
// Open returns.
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
	d := &DB{dir: dir, opts: &o, fs: o.FS, tableOpts: o.tableOptions()}
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
		d.cache = c
	}
	d.tableCache = newTableCache(d.fs, dir, sstable.ReaderOptions{Cache: d.cache, AlwaysLoadFilters: o.AlwaysLoadFilters}, max(o.MaxOpenFiles, 0))
	if err := d.open(); err != nil {
		d.tableCache.close()
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
	mem := d.newMemTable(d.opts.WriteBufferSize, 0)
	for i, num := range wals {
		var torn bool
		if mem, maxSeq, torn, err = d.replayWAL(num, mem, &recovered, maxSeq); err != nil {
			return err
		}
		if torn && i < len(wals)-1 {
			// A WAL is synced in full before the next one takes a write, so
			// only the newest can have a torn tail; replaying on would
			// recover later batches without earlier ones.
			return base.CorruptionErrorf("lsm: WAL %s ends in a torn record but is followed by newer WALs",
				manifest.FilePath(d.dir, manifest.FileKindLog, num))
		}
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

	// Flush what the WALs held, start a new WAL, and record both: the old
	// WALs are then obsolete.
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
		_ = w.Close()
		return err
	}
	d.mu.Lock()
	d.mu.mem = d.newMemTable(d.opts.WriteBufferSize, walNum)
	d.mu.wal = w
	d.updateReadStateLocked()
	d.mu.Unlock()
	d.deleteObsoleteFiles(true /* atOpen */)
	d.mu.Lock()
	d.maybeScheduleCompactionLocked()
	d.mu.Unlock()
	return nil
}

// replayWAL applies WAL num's batches to mem, moving full memtables to
// recovered, and returns the memtable to continue with and the largest
// sequence number seen.
func (d *DB) replayWAL(num uint64, mem *memTable, recovered *[]*memTable, maxSeq base.SeqNum) (_ *memTable, _ base.SeqNum, torn bool, _ error) {
	path := manifest.FilePath(d.dir, manifest.FileKindLog, num)
	f, err := d.fs.Open(path)
	if err != nil {
		return nil, 0, false, errors.Wrapf(err, "lsm: opening WAL %s", path)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, 0, false, errors.Wrapf(err, "lsm: WAL %s", path)
	}
	r := record.NewReader(io.NewSectionReader(f, 0, size))
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, false, errors.Wrapf(err, "lsm: replaying WAL %s", path)
		}
		br, err := batch.Decode(rec)
		if err != nil {
			return nil, 0, false, errors.Wrapf(err, "lsm: replaying WAL %s", path)
		}
		size := int64(len(rec)) + int64(br.Count())*memEntryOverhead
		if mem.charged+size > mem.budget && mem.charged > 0 {
			*recovered = append(*recovered, mem)
			mem = d.newMemTable(max(size, d.opts.WriteBufferSize), 0)
		} else if mem.charged == 0 && size > mem.budget {
			mem = d.newMemTable(size, 0)
		}
		mem.charged += size
		seq := br.SeqNum()
		for {
			kind, key, value, ok, err := br.Next()
			if err != nil {
				return nil, 0, false, errors.Wrapf(err, "lsm: replaying WAL %s", path)
			}
			if !ok {
				break
			}
			if err := mem.add(seq, kind, key, value); err != nil {
				return nil, 0, false, errors.Wrapf(err, "lsm: replaying WAL %s", path)
			}
			if seq > maxSeq {
				maxSeq = seq
			}
			seq++
		}
	}
	if r.TornTail() {
		d.opts.Logger.Warn("lsm: dropped the torn tail of a WAL (writes never acknowledged as synced)",
			"wal", path, "validBytes", r.TornTailOffset())
	}
	return mem, maxSeq, r.TornTail(), nil
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
	var live map[uint64]bool
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
		case atOpen && kind == manifest.FileKindTable && !live[num]:
			d.removeFile(manifest.FilePath(d.dir, kind, num))
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
