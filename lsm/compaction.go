package lsm

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/merge"
	"github.com/bookie-index/bookie-index/lsm/internal/rangedel"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// maybeScheduleCompactionLocked starts background compactions while there
// is work and a free job slot (one slot stays for the flush). d.mu must
// be held.
func (d *DB) maybeScheduleCompactionLocked() {
	if d.mu.closed || d.writeErrLocked() != nil || d.opts.ReadOnly || d.mu.ingesting || d.mu.openFlush || d.compactionsPausedLocked() {
		return
	}
	for d.mu.compactions < max(1, d.opts.MaxBackgroundJobs-1) {
		v := d.mu.versions.Current()
		c := d.pickCompactionLocked(v)
		if c == nil && d.mu.compactions == 0 {
			d.armIdleCompactionLocked(v)
		}
		v.Unref()
		if c == nil {
			if d.mu.compactions == 0 {
				// Nothing left to retry: a compaction that failed for lack
				// of space is not wanted any more.
				d.mu.space.compactionErr = nil
			}
			return
		}
		d.mu.compactions++
		d.bgWG.Add(1)
		go func() {
			defer d.bgWG.Done()
			err := d.runCompaction(d.bgCtx, c)
			d.mu.Lock()
			d.mu.compactions--
			switch {
			case err == nil:
				d.mu.space.compactionErr = nil
			case errors.Is(err, context.Canceled) || d.mu.closed:
			case vfs.IsNoSpace(err):
				// It would fail again at once: pause compactions, with
				// backoff, until space returns.
				d.compactionNoSpaceLocked(errors.Wrap(err, "lsm: background compaction"))
			default:
				// A failed compaction (a corrupt or unreadable table)
				// would be picked again at once: stop writing instead,
				// as after a failed flush; reads go on.
				d.failLocked(errors.Wrap(err, "lsm: background compaction"))
			}
			d.maybeScheduleCompactionLocked()
			d.mu.cond.Broadcast()
			d.mu.Unlock()
		}()
	}
}

// runCompaction executes c and installs its result; it clears the inputs'
// compacting flags however it ends.
func (d *DB) runCompaction(ctx context.Context, c *compaction) (err error) {
	defer func() {
		for _, t := range c.allInputs() {
			t.SetCompacting(false)
		}
	}()
	start := time.Now()
	edit := &manifest.VersionEdit{}
	for i, level := range []int{c.startLevel, c.outputLevel} {
		for _, t := range c.inputs[i] { // (inputs[1] is empty for an in-place rewrite)
			edit.DeletedTables = append(edit.DeletedTables, manifest.DeletedTable{Level: level, FileNum: t.FileNum})
		}
	}
	var outputs []*manifest.TableMeta
	var remainder *manifest.TableMeta // a sliced compaction's L0 data outside its slice
	var bytesIn uint64
	for _, t := range c.allInputs() {
		bytesIn += t.Size
	}
	// A table moves down unchanged when nothing below overlaps it, unless
	// the move is asked to rewrite (manual compactions drop deleted data)
	// or its own tombstones delete some of its entries.
	trivial := len(c.inputs[0]) == 1 && len(c.inputs[1]) == 0 && c.startLevel != c.outputLevel && !c.inPlace &&
		!c.manual && c.inputs[0][0].RangeDeletions == 0
	if trivial {
		outputs = c.inputs[0]
	} else {
		if outputs, remainder, err = d.writeCompactionOutputs(ctx, c); err != nil {
			return err
		}
	}
	for _, t := range outputs {
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: c.outputLevel, Meta: t})
	}
	if remainder != nil {
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: 0, Meta: remainder})
	}
	switch {
	case c.startLevel > 0:
		edit.CompactPointers = []manifest.CompactPointer{{Level: c.startLevel, Key: base.InternalKey{UserKey: c.largest}}}
	case c.sliced:
		// The next slice starts where this one ended; an empty key starts
		// the sweep over.
		next := append([]byte{}, c.sliceHi...)
		edit.CompactPointers = []manifest.CompactPointer{{Level: 0, Key: base.InternalKey{UserKey: next}}}
	}
	if !trivial && (len(outputs) > 0 || remainder != nil) {
		if err := d.makeNamesDurable(); err != nil {
			// No edit names the outputs: remove them, so that retries
			// on a full disk do not leave them behind.
			for _, t := range outputs {
				d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum))
			}
			return err
		}
	}
	d.mu.Lock()
	err = d.mu.versions.LogAndApply(edit)
	if err == nil {
		d.updateReadStateLocked()
		d.removeOrphansLocked()
	} else if vfs.IsNoSpace(err) && !trivial {
		// The edit may be durable until a later one succeeds (that one
		// writes a new manifest): remove the outputs only then.
		for _, t := range outputs {
			d.mu.space.orphans = append(d.mu.space.orphans, t.FileNum)
		}
	}
	d.mu.Unlock()
	if err != nil {
		if vfs.IsNoSpace(err) {
			// Not a reason to stop writing: the caller pauses compactions
			// (or, for a manual one, returns the error).
			return errors.Wrap(err, "lsm: compaction")
		}
		// The edit may or may not be durable: leave its tables alone (the
		// next open deletes them if they are not live).
		d.fail(err)
		return err
	}
	bytesOut := tablesSize(outputs)
	if remainder != nil {
		bytesOut += remainder.Size
	}
	if trivial {
		d.metrics.trivialMoves.Add(1)
	} else {
		d.metrics.compactions.Add(1)
		d.metrics.compactionBytesIn.Add(int64(bytesIn))
		d.metrics.compactionBytesOut.Add(int64(bytesOut))
	}
	d.opts.Logger.Info("lsm: compaction", "reason", c.reason, "from", c.startLevel, "to", c.outputLevel,
		"inputs", len(c.inputs[0])+len(c.inputs[1]), "outputs", len(outputs), "remainder", remainder != nil, "bytesIn", bytesIn, "bytesOut", bytesOut,
		"trivialMove", trivial, "duration", time.Since(start))
	d.deleteObsoleteFiles(false)
	return nil
}

// writeCompactionOutputs merges the inputs into new tables of the output
// level, cut at TargetFileSizeBase between user keys (an intra-L0
// compaction writes one table). A sliced compaction writes its L0 inputs'
// keys outside the slice to remainder, one L0 table. A large compaction
// into a level with several tables is split into key ranges merged in
// parallel (subcompactionRanges).
func (d *DB) writeCompactionOutputs(ctx context.Context, c *compaction) (outputs []*manifest.TableMeta, remainder *manifest.TableMeta, err error) {
	d.mu.Lock()
	snapshots := d.snapshotSeqsLocked()
	v := d.mu.versions.Current()
	bottommost := true
	for level := c.outputLevel + 1; level < manifest.NumLevels && bottommost; level++ {
		bottommost = len(v.Overlaps(level, c.smallest, c.largest, !c.largestExclusive)) == 0
	}
	// An L0 output stays above the rest of L0 and the levels below, and is
	// ordered among L0 tables by its sequence numbers: never bottommost.
	bottommost = bottommost && !c.intraL0()
	d.mu.Unlock()
	defer v.Unref()

	job := &compactionJob{d: d, c: c, snapshots: snapshots, bottommost: bottommost}
	var ts []rangedel.Tombstone
	defer func() {
		for _, h := range job.handles {
			d.tableCache.release(h)
		}
	}()
	for _, t := range c.allInputs() {
		h, err := d.tableCache.get(t.FileNum)
		if err != nil {
			return nil, nil, err
		}
		job.handles = append(job.handles, h)
		job.tables = append(job.tables, t)
		for _, f := range h.tombstones.Fragments() {
			for _, s := range f.Seqs {
				ts = append(ts, rangedel.Tombstone{Start: f.Start, End: f.End, Seq: s})
			}
		}
	}
	ci := &compactionIter{snapshots: snapshots, bottommost: bottommost}
	if len(ts) > 0 {
		all := rangedel.BuildSet(ts).Fragments()
		job.frags = ci.outputTombstones(all)
		if c.sliced {
			// The slice's tombstones go down; the others stay in L0, where
			// they still delete data below.
			job.frags = rangedel.Truncate(job.frags, c.sliceLo, c.sliceHi)
			kept := (&compactionIter{snapshots: snapshots}).outputTombstones(all)
			if c.sliceLo != nil {
				job.remFrags = rangedel.Truncate(kept, nil, c.sliceLo)
			}
			if c.sliceHi != nil {
				job.remFrags = append(job.remFrags, rangedel.Truncate(kept, c.sliceHi, nil)...)
			}
		}
	}
	if c.inPlace {
		// Tombstones of the levels above delete entries here too; they are
		// not written (they stay in their own tables). They come from the
		// version read with the snapshot list, so that a tombstone newer
		// than a snapshot taken since is not applied without it.
		external, err := d.externalTombstones(c, v)
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, external...)
	}
	if len(ts) > 0 {
		job.tombs = rangedel.BuildSet(ts)
	}

	ranges := d.subcompactionRanges(c)
	if ranges == nil {
		ranges = d.splitIntoEmptyLevel(c, job)
	}
	if len(ranges) <= 1 {
		return job.run(ctx, keyRange{lo: c.sliceLo, hi: c.sliceHi}, false)
	}
	// Each range is merged by its own goroutine into its own tables; the
	// first failure cancels the others, and every table written is removed.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make([][]*manifest.TableMeta, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i, r := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], _, errs[i] = job.run(ctx, r, true)
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, tables := range results {
		outputs = append(outputs, tables...)
	}
	// The error to report: the first that is not another range's
	// cancellation. Each range removed its own tables when it failed.
	var failed error
	for _, err := range errs {
		if err != nil && (failed == nil || errors.Is(failed, context.Canceled) && !errors.Is(err, context.Canceled)) {
			failed = err
		}
	}
	if failed != nil {
		for _, t := range outputs {
			d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum))
		}
		return nil, nil, failed
	}
	d.metrics.subcompactions.Add(int64(len(ranges)))
	return outputs, nil, nil
}

// keyRange is [lo, hi) of user keys; nil bounds are open.
type keyRange struct{ lo, hi []byte }

// compactionJob is what the key ranges of one compaction share: the input
// tables (held open), the snapshots, the tombstones that delete input
// entries and those to write.
type compactionJob struct {
	d          *DB
	c          *compaction
	snapshots  []base.SeqNum
	bottommost bool
	tables     []*manifest.TableMeta
	handles    []*tableHandle // tables' readers, in the same order
	tombs      *rangedel.Set  // deletes input entries (read only: shared)
	// frags are the tombstones to write (clipped to each output's
	// bounds); remFrags those a sliced compaction leaves in L0.
	frags, remFrags []rangedel.Fragment
}

// run merges the inputs' keys in r into new tables. A sliced compaction
// (run for the whole key space) also returns the remainder of its L0
// inputs outside the slice. With bounded, r is one range of a split
// compaction: only the tables overlapping it are read, from r.lo, up to
// r.hi.
func (j *compactionJob) run(ctx context.Context, r keyRange, bounded bool) (outputs []*manifest.TableMeta, remainder *manifest.TableMeta, err error) {
	d, c := j.d, j.c
	var children []base.InternalIterator
	for i, t := range j.tables {
		if bounded && !overlapsRange(t, r) {
			continue
		}
		opts := sstable.IterOptions{NoFillCache: true}
		if bounded {
			opts.LowerBound = r.lo
		}
		children = append(children, j.handles[i].reader.NewIter(opts))
	}
	merged := merge.NewIter(children...)
	defer func() {
		if cerr := merged.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	ci := &compactionIter{snapshots: j.snapshots, bottommost: j.bottommost, tombs: j.tombs}

	var out, rem *tableOutput
	lower := r.lo // first key of the current output; nil for the first
	abort := func(err error) ([]*manifest.TableMeta, *manifest.TableMeta, error) {
		for _, o := range []*tableOutput{out, rem} {
			if o != nil {
				o.abort()
			}
		}
		for _, t := range outputs {
			d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum))
		}
		return nil, nil, err
	}
	newOutput := func() (*tableOutput, error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.newTableOutput()
	}
	finish := func(upper []byte) error {
		if err := out.addTombstones(rangedel.Truncate(j.frags, lower, upper)); err != nil {
			return err
		}
		meta, err := out.finish()
		out = nil
		if err != nil {
			return err
		}
		if meta != nil {
			outputs = append(outputs, meta)
		}
		return nil
	}
	var lastKey []byte
	n := 0
	in := newCompactionInput(d, ci, merged)
	// Keys outside the slice stay in L0: not at the bottom of the tree.
	in.onKey = func(k []byte) { ci.bottommost = j.bottommost && c.inSlice(k) }
	for k, tr, v, ok := in.First(); ok; k, tr, v, ok = in.Next() {
		if in.steps >= n+1024 { // every 1024 input entries
			n = in.steps
			if ctx.Err() != nil {
				return abort(errors.Wrap(ctx.Err(), "lsm: compaction cancelled"))
			}
		}
		if bounded && r.hi != nil && bytes.Compare(k, r.hi) >= 0 {
			break
		}
		if !c.inSlice(k) {
			if rem == nil {
				if rem, err = newOutput(); err != nil {
					return abort(err)
				}
			}
			if err := rem.add(k, tr, v); err != nil {
				return abort(err)
			}
			continue
		}
		if out != nil && c.outputLevel > 0 && out.estimatedSize() >= uint64(d.opts.TargetFileSizeBase) && !bytes.Equal(k, lastKey) {
			if err := finish(k); err != nil {
				return abort(err)
			}
			lower = append([]byte(nil), k...)
		}
		if out == nil {
			if out, err = newOutput(); err != nil {
				return abort(err)
			}
		}
		if err := out.add(k, tr, v); err != nil {
			return abort(err)
		}
		lastKey = append(lastKey[:0], k...)
	}
	if err := merged.Error(); err != nil {
		return abort(err)
	}
	if out == nil && len(rangedel.Truncate(j.frags, r.lo, r.hi)) > 0 {
		if out, err = newOutput(); err != nil {
			return abort(err)
		}
	}
	if out != nil {
		if err := finish(r.hi); err != nil {
			return abort(err)
		}
	}
	if rem == nil && len(j.remFrags) > 0 {
		if rem, err = newOutput(); err != nil {
			return abort(err)
		}
	}
	if rem != nil {
		if err := rem.addTombstones(j.remFrags); err != nil {
			return abort(err)
		}
		remainder, err = rem.finish()
		rem = nil
		if err != nil {
			return abort(err)
		}
	}
	return outputs, remainder, nil
}

// Compact compacts every table overlapping [start, end] (nil: unbounded)
// down to the last level, dropping overwritten and deleted data. It first
// flushes the memtables. It stops early with ctx's error when ctx is
// cancelled or the DB closes; what it finished stays done.
func (d *DB) Compact(ctx context.Context, start, end []byte) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	// Close cancels and waits for manual compactions too.
	d.mu.Lock()
	if err := d.checkOpenLocked("Compact"); err != nil {
		d.mu.Unlock()
		return err
	}
	d.bgWG.Add(1)
	d.mu.Unlock()
	defer d.bgWG.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.bgCtx, cancel)
	defer stop()
	if err := d.Flush(); err != nil {
		return err
	}
	for level := 0; level < d.opts.NumLevels-1; level++ {
		for {
			if err := d.lockForCompact(ctx); err != nil {
				return err
			}
			v := d.mu.versions.Current()
			inputs := v.Overlaps(level, start, end, true)
			if len(inputs) == 0 {
				v.Unref()
				d.mu.Unlock()
				break
			}
			c := &compaction{startLevel: level, outputLevel: level + 1, manual: true, reason: "manual"}
			c.inputs[0] = inputs
			if !d.mu.ingesting {
				c = d.finishPick(v, c)
			} else {
				c = nil
			}
			v.Unref()
			if c == nil {
				// A background compaction holds some of the tables.
				d.mu.cond.Wait()
				d.mu.Unlock()
				continue
			}
			if err := d.runManualCompactionLocked(ctx, c); err != nil {
				return err
			}
		}
	}
	return d.compactLastLevel(ctx, start, end)
}

// runManualCompactionLocked runs a compaction a manual Compact picked.
// d.mu is held: it counts the compaction in d.mu.compactions with the
// background ones before it unlocks (Ingest waits for none to run), and
// uncounts it when done.
func (d *DB) runManualCompactionLocked(ctx context.Context, c *compaction) error {
	d.mu.compactions++
	d.mu.Unlock()
	err := d.runCompaction(ctx, c)
	d.mu.Lock()
	d.mu.compactions--
	d.mu.cond.Broadcast()
	d.mu.Unlock()
	if vfs.IsNoSpace(err) && !errors.Is(err, ErrNoSpace) {
		err = base.NoSpaceError("lsm: out of space: the compaction failed; what it wrote is removed", err)
	}
	return d.markIfClosed(err)
}

// compactLastLevel rewrites, in place, the last level's tables in the range
// that still hold range tombstones or non-zero sequence numbers, so that a
// manual compaction leaves only live data at sequence number 0 (as far as
// open snapshots allow). Each table present when it starts is rewritten at
// most once.
func (d *DB) compactLastLevel(ctx context.Context, start, end []byte) error {
	last := d.opts.NumLevels - 1
	d.mu.Lock()
	v := d.mu.versions.Current()
	todo := map[uint64]bool{}
	for _, t := range v.Overlaps(last, start, end, true) {
		if t.RangeDeletions > 0 || t.LargestSeqNum > 0 {
			todo[t.FileNum] = true
		}
	}
	v.Unref()
	d.mu.Unlock()
	for len(todo) > 0 {
		if err := d.lockForCompact(ctx); err != nil {
			return err
		}
		v := d.mu.versions.Current()
		var c *compaction
		waiting := false
		present := map[uint64]bool{}
		for _, t := range v.Tables(last) {
			present[t.FileNum] = true
			if !todo[t.FileNum] || c != nil {
				continue
			}
			if t.IsCompacting() || d.mu.ingesting {
				waiting = true
				continue
			}
			t.SetCompacting(true)
			c = &compaction{startLevel: last, outputLevel: last, manual: true, inPlace: true, reason: "manual (last level)"}
			c.inputs[0] = []*manifest.TableMeta{t}
			c.setBounds()
			delete(todo, t.FileNum)
		}
		v.Unref()
		for num := range todo {
			if !present[num] {
				delete(todo, num) // compacted away meanwhile
			}
		}
		if c == nil {
			if waiting {
				d.mu.cond.Wait()
			}
			d.mu.Unlock()
			continue
		}
		if err := d.runManualCompactionLocked(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// WaitForCompactions waits until no flush or compaction is running or
// wanted: the tree has settled. It returns early with ctx's error, or with
// the background error if the DB failed.
func (d *DB) WaitForCompactions(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		d.mu.Lock()
		d.mu.cond.Broadcast()
		d.mu.Unlock()
	})
	defer stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for {
		if err := d.checkOpenLocked("WaitForCompactions"); err != nil {
			return err
		}
		if err := d.writeErrLocked(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		d.maybeScheduleFlushLocked()
		d.maybeScheduleCompactionLocked()
		if !d.mu.flushing && len(d.mu.imm) == 0 && d.mu.compactions == 0 && !d.mu.coverage.scanning {
			if err := d.mu.space.compactionErr; err != nil && d.compactionsPausedLocked() {
				// Settled only because compactions wait for space.
				return base.NoSpaceError("lsm: out of space: compactions wait for space and retry", err)
			}
			return nil
		}
		d.mu.cond.Wait()
	}
}

// lockForCompact takes d.mu for one step of a manual compaction, unless the
// compaction was cancelled or the DB closed (then it returns why, unlocked).
func (d *DB) lockForCompact(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return errors.Wrap(err, "lsm: Compact cancelled")
	}
	d.mu.Lock()
	if err := d.checkOpenLocked("Compact"); err != nil {
		d.mu.Unlock()
		return err
	}
	return nil
}
