package lsm

import (
	"io"
	"os"
	"path/filepath"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// CheckpointInfo describes a checkpoint Checkpoint wrote.
type CheckpointInfo struct {
	Dir string
	// Tables is the number of tables of the checkpoint, Bytes their size;
	// Linked of them are hard links, the rest copies (a link across file
	// systems fails).
	Tables int
	Bytes  uint64
	Linked int
	// WALs is the number of WALs copied (only for a read-only DB holding
	// writes its WALs have not flushed).
	WALs int
	// LastSeqNum is the sequence number of the last write the checkpoint
	// holds: it holds every write up to it and none after.
	LastSeqNum uint64
}

// Checkpoint writes a consistent copy of the DB, as of the call, into dir,
// a directory that must not exist, while writes go on (RocksDB's
// Checkpoint). The copy is a database of its own: Open it, or move it in
// place of a lost one.
//
// How (RocksDB's default, log_size_for_flush = 0): the memtables are
// flushed first, so that the copy needs no WAL; then the tables of the
// current version, pinned against deletion by compactions, are hard-linked
// (copied if the link fails, e.g. across file systems), and a new manifest
// describing exactly them is written, with CURRENT. A table is immutable,
// so a link shares its blocks with the live DB until a compaction deletes
// the original; the checkpoint then owns them alone. The copy holds every
// write acknowledged before the call and, of the writes concurrent with
// it, a prefix in sequence order: the version's tables hold the flushed
// memtables, which are flushed oldest first.
//
// Everything is written into dir + ".tmp", synced, and renamed to dir at
// the end, as RocksDB does: dir appears complete or not at all. A failure
// removes the staging directory; a crash leaves it (a later Checkpoint to
// the same dir refuses until it is removed).
//
// A read-only DB is not flushed (it writes nothing): its unflushed WALs
// are copied whole instead, with their synced-length marks, and replay
// when the copy opens. lost/ is not copied.
func (d *DB) Checkpoint(dir string) (CheckpointInfo, error) {
	info := CheckpointInfo{Dir: dir}
	if d.closedFlag.Load() {
		return info, errors.Wrap(ErrClosed, "lsm: Checkpoint")
	}
	fs := d.fs
	staging := filepath.Clean(dir) + ".tmp"
	for _, p := range []string{dir, staging} {
		if _, err := fs.Stat(p); err == nil {
			return info, errors.Newf("lsm: checkpoint directory %s exists (a checkpoint goes into a new directory)", p)
		} else if !errors.Is(err, os.ErrNotExist) {
			return info, errors.Wrapf(err, "lsm: checkpoint directory %s", p)
		}
	}
	if !d.opts.ReadOnly {
		if err := d.Flush(); err != nil {
			return info, errors.Wrap(err, "lsm: Checkpoint: flushing the memtables")
		}
	}
	if err := fs.MkdirAll(staging, 0o755); err != nil {
		return info, errors.Wrapf(err, "lsm: creating checkpoint directory %s", staging)
	}
	if err := d.writeCheckpoint(staging, &info); err != nil {
		_ = fs.RemoveAll(staging)
		return info, err
	}
	if err := fs.Rename(staging, dir); err != nil {
		_ = fs.RemoveAll(staging)
		return info, errors.Wrapf(err, "lsm: checkpoint: renaming %s to %s", staging, dir)
	}
	if err := vfs.SyncDir(fs, filepath.Dir(filepath.Clean(dir))); err != nil {
		return info, errors.Wrap(err, "lsm: checkpoint")
	}
	d.opts.Logger.Info("lsm: checkpoint written", "dir", dir, "tables", info.Tables, "bytes", info.Bytes,
		"linked", info.Linked, "wals", info.WALs, "lastSeqNum", info.LastSeqNum)
	return info, nil
}

// writeCheckpoint writes the checkpoint's files into the (new, empty)
// directory dir and syncs it.
func (d *DB) writeCheckpoint(dir string, info *CheckpointInfo) error {
	fs := d.fs
	// The read state's reference keeps the version's tables from being
	// deleted until they are linked.
	rs := d.loadReadState()
	defer rs.unref()
	v := rs.version
	d.mu.Lock()
	logNumber := d.mu.versions.LogNumber()
	d.mu.Unlock()

	edit := &manifest.VersionEdit{}
	var maxFileNum uint64
	for level := range manifest.NumLevels {
		if cp := v.CompactPointer(level); cp.UserKey != nil {
			edit.CompactPointers = append(edit.CompactPointers, manifest.CompactPointer{Level: level, Key: cp})
		}
		for _, t := range v.Tables(level) {
			src := manifest.FilePath(d.dir, manifest.FileKindTable, t.FileNum)
			dst := manifest.FilePath(dir, manifest.FileKindTable, t.FileNum)
			linked, err := linkOrCopy(fs, src, dst)
			if err != nil {
				return err
			}
			if linked {
				info.Linked++
			}
			info.Tables++
			info.Bytes += t.Size
			info.LastSeqNum = max(info.LastSeqNum, uint64(t.LargestSeqNum))
			maxFileNum = max(maxFileNum, t.FileNum)
			edit.NewTables = append(edit.NewTables, manifest.NewTable{Level: level, Meta: &manifest.TableMeta{
				FileNum: t.FileNum, Size: t.Size, Smallest: t.Smallest, Largest: t.Largest,
				SmallestSeqNum: t.SmallestSeqNum, LargestSeqNum: t.LargestSeqNum,
				Entries: t.Entries, RangeDeletions: t.RangeDeletions,
			}})
		}
	}
	if d.opts.ReadOnly {
		n, maxWAL, err := d.copyUnflushedWALs(dir, logNumber)
		if err != nil {
			return err
		}
		info.WALs = n
		if n > 0 {
			edit.LogNumber = logNumber
			maxFileNum = max(maxFileNum, maxWAL)
			// The WALs' writes are the newest; recovery raises the last
			// sequence number past them.
			info.LastSeqNum = max(info.LastSeqNum, d.visibleSeq.Load())
		}
	}
	edit.NextFileNum = maxFileNum + 1
	edit.LastSeqNum = base.SeqNum(info.LastSeqNum)

	// Create writes an empty manifest (file number 1: no table or WAL of
	// the source has it, the source's own first manifest took it) and
	// CURRENT, syncing the directory; the edit then adds the tables,
	// synced.
	vs, err := manifest.Create(fs, dir, &manifest.Options{MaxManifestSize: d.opts.MaxManifestFileSize})
	if err != nil {
		return errors.Wrapf(err, "lsm: writing the checkpoint's manifest in %s", dir)
	}
	err = vs.LogAndApply(edit)
	if cerr := vs.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return errors.Wrapf(err, "lsm: writing the checkpoint's manifest in %s", dir)
	}
	return errors.Wrap(vfs.SyncDir(fs, dir), "lsm: checkpoint")
}

// copyUnflushedWALs copies the WALs numbered logNumber and up, with their
// synced-length marks, into dir, and returns how many and the largest
// number.
func (d *DB) copyUnflushedWALs(dir string, logNumber uint64) (int, uint64, error) {
	names, err := d.fs.List(d.dir)
	if err != nil {
		return 0, 0, errors.Wrapf(err, "lsm: listing %s", d.dir)
	}
	n, maxNum := 0, uint64(0)
	for _, name := range names {
		kind, num, ok := manifest.ParseFileName(name)
		if !ok || kind != manifest.FileKindLog || num < logNumber {
			continue
		}
		for _, k := range []manifest.FileKind{manifest.FileKindLog, manifest.FileKindSyncedLength} {
			src := manifest.FilePath(d.dir, k, num)
			if _, err := d.fs.Stat(src); k == manifest.FileKindSyncedLength && errors.Is(err, os.ErrNotExist) {
				continue // no mark: recovery treats the WAL as an old one
			}
			if err := copyFile(d.fs, src, manifest.FilePath(dir, k, num)); err != nil {
				return 0, 0, err
			}
		}
		n++
		maxNum = max(maxNum, num)
	}
	return n, maxNum, nil
}

// linkOrCopy hard-links src to dst, or copies it if the link fails.
func linkOrCopy(fs FS, src, dst string) (linked bool, _ error) {
	lerr := fs.Link(src, dst)
	if lerr == nil {
		return true, nil
	}
	if err := copyFile(fs, src, dst); err != nil {
		return false, errors.Wrapf(err, "lsm: checkpoint: linking %s failed (%v), and so did copying it", src, lerr)
	}
	return false, nil
}

// copyFile copies src to the new file dst and syncs it.
func copyFile(fs FS, src, dst string) error {
	in, err := fs.Open(src)
	if err != nil {
		return errors.Wrapf(err, "lsm: opening %s", src)
	}
	defer func() { _ = in.Close() }() // read only
	size, err := in.Size()
	if err != nil {
		return errors.Wrapf(err, "lsm: reading %s", src)
	}
	out, err := fs.CreateExclusive(dst)
	if err != nil {
		return errors.Wrapf(err, "lsm: creating %s", dst)
	}
	_, err = io.Copy(out, io.NewSectionReader(in, 0, size))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return errors.Wrapf(err, "lsm: copying %s to %s", src, dst)
}
