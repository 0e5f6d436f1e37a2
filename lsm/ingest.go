package lsm

import (
	"bytes"
	"sort"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/sstable"
	"github.com/cockroachdb/errors"
)

// Ingest adds tables written with CreateTable to the DB, moving the files
// into the DB's directory (hard links, the originals removed once the
// change is durable; a failed Ingest leaves them in place). The tables must not overlap one another. Their
// keys become visible atomically and override older values.
//
// A table whose key range overlaps nothing in the DB (the index rebuild
// case) is placed, as it is, in the lowest level: no rewrite, and reads of
// it are as fast as of any compacted table. A table that overlaps existing
// data is rewritten once with a sequence number newer than everything in
// the DB and placed in L0, after flushing any memtable it overlaps.
func (d *DB) Ingest(paths []string) error {
	if d.opts.ReadOnly {
		return ErrReadOnly
	}
	type ingested struct {
		path     string
		props    *sstable.Properties
		smallest []byte
		largest  []byte
	}
	var tables []ingested
	for _, p := range paths {
		f, err := d.fs.Open(p)
		if err != nil {
			return errors.Wrapf(err, "lsm: ingest: opening %s", p)
		}
		r, err := sstable.Open(f, p, sstable.ReaderOptions{})
		if err != nil {
			_ = f.Close()
			return errors.Wrapf(err, "lsm: ingest %s", p)
		}
		props := *r.Properties()
		_ = r.Close()
		if props.LargestSeqNum != 0 {
			return errors.Newf("lsm: ingest %s: a table to ingest must be written by CreateTable (sequence numbers 0), not taken from a DB", p)
		}
		if props.RangeDeletions > 0 {
			return errors.Newf("lsm: ingest %s: tables to ingest hold no range deletions", p)
		}
		if props.Entries == 0 {
			continue
		}
		tables = append(tables, ingested{path: p, props: &props, smallest: props.Smallest.UserKey, largest: props.Largest.UserKey})
	}
	sort.Slice(tables, func(i, j int) bool { return bytes.Compare(tables[i].smallest, tables[j].smallest) < 0 })
	for i := 1; i < len(tables); i++ {
		if bytes.Compare(tables[i-1].largest, tables[i].smallest) >= 0 {
			return errors.Newf("lsm: ingest: tables %s and %s overlap", tables[i-1].path, tables[i].path)
		}
	}
	if len(tables) == 0 {
		return nil
	}

	// Hold the commit lock: no write may slip between the overlap check
	// and the installation. Batches that took their sequence numbers
	// before must be visible first, or one could land in the memtable,
	// above the ingested table, after the overlap check.
	d.commitMu.Lock()
	defer d.commitMu.Unlock()
	d.mu.Lock()
	nextSeq := d.mu.nextSeq
	d.mu.Unlock()
	if err := d.waitPublished(nextSeq - 1); err != nil {
		return err
	}
	d.mu.Lock()
	if err := d.checkOpenLocked("Ingest"); err != nil {
		d.mu.Unlock()
		return err
	}
	overlapsMem := false
	for _, m := range append([]*memTable{d.mu.mem}, d.mu.imm...) {
		for _, t := range tables {
			if memOverlaps(m, t.smallest, t.largest) {
				overlapsMem = true
			}
		}
	}
	d.mu.Unlock()
	if overlapsMem {
		if err := d.flushLocked(); err != nil {
			return err
		}
	}

	// No compaction may run meanwhile: one writing into the last level
	// could produce a table spanning the gap an ingested table goes into.
	d.mu.Lock()
	if err := d.waitForL0RoomLocked(); err != nil { // (the table may go to L0)
		d.mu.Unlock()
		return err
	}
	d.mu.ingesting = true
	for d.mu.compactions > 0 && !d.mu.closed {
		d.mu.cond.Wait()
	}
	defer func() {
		d.mu.Lock()
		d.mu.ingesting = false
		d.maybeScheduleCompactionLocked()
		d.mu.cond.Broadcast()
		d.mu.Unlock()
	}()
	if err := d.checkOpenLocked("Ingest"); err != nil {
		d.mu.Unlock()
		return err
	}
	v := d.mu.versions.Current()
	defer v.Unref()
	// With a snapshot open, a table kept at sequence number 0 would be
	// visible to it: rewrite everything newer instead.
	snapshots := len(d.mu.snapshots) > 0
	d.mu.Unlock()

	edit := &manifest.VersionEdit{}
	type moved struct{ from, to string }
	var movedFiles []moved
	var rewritten []*manifest.TableMeta
	var sources []string
	var firstSeq, lastSeq base.SeqNum
	fail := func(err error) error {
		for _, m := range movedFiles {
			d.removeFile(m.to)
		}
		for _, t := range rewritten {
			d.removeFile(manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum))
		}
		if lastSeq >= firstSeq && firstSeq > 0 {
			_ = d.publish(firstSeq, lastSeq) // nothing holds these sequence numbers
		}
		return err
	}
	for _, t := range tables {
		overlaps := snapshots
		for level := 0; level < manifest.NumLevels && !overlaps; level++ {
			overlaps = len(v.Overlaps(level, t.smallest, t.largest, true)) > 0
		}
		if !overlaps {
			d.mu.Lock()
			fileNum := d.mu.versions.NextFileNum()
			d.mu.Unlock()
			dst := manifest.FilePath(d.dir, manifest.FileKindTable, fileNum)
			// A hard link: the caller's file stays until the edit is
			// durable, so a failed Ingest can be retried.
			if err := d.fs.Link(t.path, dst); err != nil {
				return fail(errors.Wrapf(err, "lsm: ingest: linking %s into the DB", t.path))
			}
			movedFiles = append(movedFiles, moved{from: t.path, to: dst})
			sources = append(sources, t.path)
			meta, err := d.tableMetaOf(fileNum, dst, t.props)
			if err != nil {
				return fail(err)
			}
			edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: d.opts.NumLevels - 1, Meta: meta})
			continue
		}
		// Rewrite with a sequence number above everything in the DB.
		d.mu.Lock()
		seq := d.mu.nextSeq
		d.mu.nextSeq++
		d.ingestedSeq.Store(uint64(seq)) // see insertRunTombstone
		d.mu.Unlock()
		if firstSeq == 0 {
			firstSeq = seq
		}
		lastSeq = seq
		meta, err := d.rewriteIngested(t.path, seq)
		if err != nil {
			return fail(err)
		}
		rewritten = append(rewritten, meta)
		sources = append(sources, t.path)
		edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: 0, Meta: meta})
	}
	if err := d.makeNamesDurable(); err != nil {
		return fail(err)
	}
	if lastSeq > 0 {
		edit.LastSeqNum = lastSeq
	}
	d.mu.Lock()
	err := d.mu.versions.LogAndApply(edit)
	if err == nil {
		d.updateReadStateLocked()
	}
	d.mu.Unlock()
	if err != nil {
		// The edit may be durable: keep its files (the next open removes
		// them if they are not live), but make the sequence numbers pass.
		if lastSeq > 0 {
			_ = d.publish(firstSeq, lastSeq)
		}
		d.fail(err)
		return err
	}
	if lastSeq > 0 {
		// The rewritten tables' entries become visible in commit order.
		if err := d.publish(firstSeq, lastSeq); err != nil {
			return err
		}
	}
	for _, p := range sources {
		_ = d.fs.Remove(p)
	}
	d.opts.Logger.Info("lsm: ingested tables", "tables", len(tables), "moved", len(movedFiles), "rewritten", len(rewritten))
	return nil
}

// memOverlaps reports whether memtable m holds a key in [lo, hi].
func memOverlaps(m *memTable, lo, hi []byte) bool {
	var it memIter
	m.mt.InitPointIter(&it.Iterator)
	if it.SeekGE(lo, base.SeekTrailer(base.SeqNumMax)) && bytes.Compare(it.UserKey(), hi) <= 0 {
		return true
	}
	return m.rangeDels.Load() > 0 // conservatively: tombstones may cover it
}

// flushLocked flushes with d.commitMu held (Flush takes it itself).
func (d *DB) flushLocked() error {
	d.mu.Lock()
	err := d.waitForL0RoomLocked()
	if err == nil && !d.mu.mem.empty() {
		err = d.switchMemTableLocked(0)
	}
	if err == nil {
		err = d.waitForFlushesLocked("Ingest")
	}
	d.mu.Unlock()
	return err
}

// tableMetaOf describes an ingested table that keeps its file.
func (d *DB) tableMetaOf(fileNum uint64, path string, p *sstable.Properties) (*manifest.TableMeta, error) {
	st, err := d.fs.Stat(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: ingest: stat %s", path)
	}
	return &manifest.TableMeta{
		FileNum: fileNum, Size: uint64(st.Size()), Smallest: p.Smallest.Clone(), Largest: p.Largest.Clone(),
		Entries: p.Entries + p.RangeDeletions, RangeDeletions: p.RangeDeletions,
	}, nil
}

// rewriteIngested copies a table's entries at sequence number seq into a
// new table of the DB.
func (d *DB) rewriteIngested(path string, seq base.SeqNum) (*manifest.TableMeta, error) {
	f, err := d.fs.Open(path)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: ingest: opening %s", path)
	}
	r, err := sstable.Open(f, path, sstable.ReaderOptions{})
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	defer r.Close()
	out, err := d.newTableOutput()
	if err != nil {
		return nil, err
	}
	it := r.NewIter(sstable.IterOptions{})
	for ok := it.First(); ok; ok = it.Next() {
		if err := out.add(it.UserKey(), base.MakeTrailer(seq, it.Trailer().Kind()), it.Value()); err != nil {
			_ = it.Close()
			out.abort()
			return nil, err
		}
	}
	if err := it.Close(); err != nil {
		out.abort()
		return nil, err
	}
	return out.finish()
}
