package manifest

import (
	"io"
	"os"
	"strings"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Create starts a new database in dir, which must exist and hold no
// CURRENT: it writes MANIFEST-000001 holding an empty snapshot, then CURRENT
// naming it, both durably.
func Create(fs vfs.FS, dir string, opts *Options) (*VersionSet, error) {
	if opts != nil && opts.ReadOnly {
		return nil, errors.New("manifest: Create with ReadOnly set")
	}
	current := FilePath(dir, FileKindCurrent, 0)
	if _, err := fs.Stat(current); err == nil {
		return nil, errors.Newf("manifest: %s already holds a database (%s exists)", dir, current)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, errors.Wrapf(err, "manifest: checking for %s", current)
	}
	vs := newVersionSet(fs, dir, opts)
	vs.nextFileNum.Store(1)
	v := NewVersion()
	vs.install(v, 0)
	vs.writer.Lock()
	defer vs.writer.Unlock()
	if err := vs.rotateLocked(v, 0 /* logNumber */, 0 /* lastSeqNum */); err != nil {
		return nil, errors.Wrapf(err, "manifest: creating a database in %s", dir)
	}
	return vs, nil
}

// Recover opens the database in dir: it reads CURRENT, replays the manifest
// it names, and (unless opts.ReadOnly) writes a new manifest holding a
// snapshot of the result, makes CURRENT name it and removes older
// manifests and leftover temp files. Appending to the old manifest instead
// could leave records behind a torn tail, where they would read as
// corruption.
//
// Every edit is synced, and its synced length marked, before LogAndApply
// returns (see the package documentation). Damage below the marked length
// is corruption: Recover fails with an error marked base.ErrCorruption
// naming the file and offset. Damage past it is the torn tail of an edit
// whose LogAndApply never returned, and is dropped. Without a readable mark
// (a database written before marks existed, or a lost or damaged mark
// file) a damaged tail is dropped too, but the manifest does not prove
// itself complete: see RecoveryInfo. A missing CURRENT gives an error
// matching os.ErrNotExist; a missing manifest and a malformed CURRENT give
// errors marked base.ErrCorruption that name the file.
//
// Table files no recovered version references are orphans. If the manifest
// proves itself complete they are garbage (outputs of flushes and
// compactions that never finished, or tables whose deletion a crash
// interrupted) and are left for the engine to delete; otherwise Recover
// moves them to lost/ before it writes the new manifest, so that the doubt
// is not forgotten (RecoveryInfo.LostTables).
func Recover(fs vfs.FS, dir string, opts *Options) (*VersionSet, error) {
	manifestNum, err := readCurrent(fs, dir)
	if err != nil {
		return nil, err
	}
	state, err := replayManifest(fs, dir, manifestNum)
	if err != nil {
		return nil, err
	}
	vs := newVersionSet(fs, dir, opts)
	vs.nextFileNum.Store(state.nextFileNum)
	vs.lastSeqNum.Store(uint64(state.lastSeqNum))
	vs.mu.manifestFileNum = manifestNum
	vs.install(state.version, state.logNumber)
	vs.recovery = state.info
	var maxNum uint64
	if vs.recovery.OrphanTables, maxNum, err = scanDir(fs, dir, state.version); err != nil {
		return nil, err
	}
	// A WAL created after the last edit has a number the manifest does not
	// know; the new manifest (and its synced-length file) must not take it.
	vs.MarkFileNumUsed(maxNum)
	if vs.opts.ReadOnly {
		return vs, nil
	}
	if !vs.recovery.Complete {
		var names []string
		for _, num := range vs.recovery.OrphanTables {
			names = append(names, FileName(FileKindTable, num))
		}
		if err := KeepInLost(fs, dir, names, false /* link */); err != nil {
			return nil, err
		}
		vs.recovery.LostTables = vs.recovery.OrphanTables
		vs.recovery.OrphanTables = nil
	}
	vs.writer.Lock()
	defer vs.writer.Unlock()
	if err := vs.rotateLocked(state.version, state.logNumber, state.lastSeqNum); err != nil {
		return nil, errors.Wrapf(err, "manifest: starting a new manifest in %s", dir)
	}
	vs.removeLeftovers()
	return vs, nil
}

// scanDir returns the numbers of the table files in dir that v does not
// reference, in increasing order, and the largest file number in dir.
func scanDir(fs vfs.FS, dir string, v *Version) (orphans []uint64, maxNum uint64, _ error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, 0, errors.Wrapf(err, "manifest: listing %s", dir)
	}
	live := map[uint64]bool{}
	for level := range NumLevels {
		for _, t := range v.levels[level] {
			live[t.FileNum] = true
		}
	}
	for _, name := range names { // sorted, and numbers are zero-padded
		kind, num, ok := ParseFileName(name)
		if !ok {
			continue
		}
		maxNum = max(maxNum, num)
		if kind == FileKindTable && !live[num] {
			orphans = append(orphans, num)
		}
	}
	return orphans, maxNum, nil
}

// removeLeftovers removes the manifests CURRENT does not name (with their
// synced-length files) and temp files, which crashes during rotation leave
// behind. It is best effort: what it cannot remove now it removes at the
// next open.
func (vs *VersionSet) removeLeftovers() {
	names, err := vs.fs.List(vs.dir)
	if err != nil {
		return
	}
	current := vs.ManifestFileNum()
	for _, name := range names {
		kind, fileNum, ok := ParseFileName(name)
		if ok && (kind == FileKindTemp || (kind == FileKindManifest && fileNum != current)) {
			_ = vs.fs.Remove(FilePath(vs.dir, kind, fileNum))
		}
		if ok && kind == FileKindManifest && fileNum != current {
			_ = vs.fs.Remove(FilePath(vs.dir, FileKindSyncedLength, fileNum))
		}
	}
}

// manifestWriter appends edits to one manifest file.
type manifestWriter struct {
	path string
	file vfs.File
	log  *record.Writer
	buf  []byte // encoding buffer, reused
	// syncedFile holds the synced-length marks of the manifest; synced
	// writes them.
	syncedFile vfs.File
	synced     *record.SyncedLengthWriter
}

// createManifest creates a manifest holding snapshot, durably: the file and
// its synced-length file are synced, then the directory, so that CURRENT
// never names a manifest whose directory entry could be lost.
func createManifest(fs vfs.FS, dir string, fileNum uint64, snapshot *VersionEdit) (*manifestWriter, error) {
	path := FilePath(dir, FileKindManifest, fileNum)
	syncedPath := FilePath(dir, FileKindSyncedLength, fileNum)
	sf, err := fs.Create(syncedPath)
	if err != nil {
		return nil, errors.Wrapf(err, "manifest: creating %s", syncedPath)
	}
	f, err := fs.Create(path)
	if err != nil {
		_ = sf.Close()
		_ = fs.Remove(syncedPath)
		return nil, errors.Wrapf(err, "manifest: creating %s", path)
	}
	m := &manifestWriter{path: path, file: f, log: record.NewWriter(f),
		syncedFile: sf, synced: record.NewSyncedLengthWriter(sf)}
	err = m.append(snapshot)
	if err == nil {
		err = errors.Wrap(vfs.SyncDir(fs, dir), "manifest")
	}
	if err != nil {
		// No CURRENT names the files yet: remove them, so that retries on
		// a full disk do not leave a manifest each.
		_ = m.close() // the error that matters is err
		_ = fs.Remove(path)
		_ = fs.Remove(syncedPath)
		return nil, err
	}
	return m, nil
}

// append writes e as one record, syncs it, and marks and syncs the synced
// length. The mark is synced too (unlike the WAL's, which would double the
// fsyncs of every synced write): an edit is rare, and a durable mark lets
// recovery prove the manifest complete even after a power loss.
func (m *manifestWriter) append(e *VersionEdit) error {
	m.buf = e.Encode(m.buf[:0])
	if _, err := m.log.WriteRecord(m.buf); err != nil {
		return errors.Wrapf(err, "manifest: writing %s", m.path)
	}
	if err := m.log.Flush(); err != nil {
		return errors.Wrapf(err, "manifest: writing %s", m.path)
	}
	if err := m.file.Sync(); err != nil {
		return errors.Wrapf(err, "manifest: syncing %s", m.path)
	}
	if err := m.synced.Mark(m.log.Size()); err != nil {
		return errors.Wrapf(err, "manifest: marking the synced length of %s", m.path)
	}
	if err := m.syncedFile.Sync(); err != nil {
		return errors.Wrapf(err, "manifest: syncing the synced length of %s", m.path)
	}
	return nil
}

// size returns the length of the manifest.
func (m *manifestWriter) size() int64 { return m.log.Size() }

func (m *manifestWriter) close() error {
	err := m.file.Close()
	if serr := m.syncedFile.Close(); err == nil {
		err = serr
	}
	return errors.Wrapf(err, "manifest: closing %s", m.path)
}

// setCurrent makes CURRENT name the manifest fileNum, atomically and
// durably: it writes a temp file, syncs it, renames it over CURRENT and
// syncs the directory. A crash at any point leaves either the old CURRENT
// or the new one.
func setCurrent(fs vfs.FS, dir string, fileNum uint64) error {
	tmp := FilePath(dir, FileKindTemp, fileNum)
	current := FilePath(dir, FileKindCurrent, 0)
	// A failure leaves no temp file (and Recover removes those a crash
	// leaves).
	return errors.Wrapf(vfs.ReplaceFile(fs, current, tmp, []byte(FileName(FileKindManifest, fileNum)+"\n")),
		"manifest: writing %s", current)
}

// maxCurrentSize bounds what readCurrent reads: CURRENT holds one name.
const maxCurrentSize = 256

// readCurrent returns the number of the manifest CURRENT names.
func readCurrent(fs vfs.FS, dir string) (uint64, error) {
	path := FilePath(dir, FileKindCurrent, 0)
	buf, err := vfs.ReadFile(fs, path, maxCurrentSize)
	switch {
	case errors.Is(err, vfs.ErrFileTooLarge):
		return 0, base.CorruptionErrorf("manifest: %v, more than a manifest name", err)
	case errors.Is(err, os.ErrNotExist):
		return 0, errors.Wrapf(err, "manifest: no database in %s: opening %s", dir, path)
	case err != nil:
		return 0, errors.Wrap(err, "manifest")
	}
	name, hasNewline := strings.CutSuffix(string(buf), "\n")
	kind, fileNum, ok := ParseFileName(name)
	if !hasNewline || !ok || kind != FileKindManifest {
		return 0, base.CorruptionErrorf("manifest: %s holds %q, not a manifest name and a newline", path, buf)
	}
	return fileNum, nil
}

// recoveredState is what replaying a manifest yields.
type recoveredState struct {
	version     *Version
	logNumber   uint64
	nextFileNum uint64
	lastSeqNum  base.SeqNum
	info        RecoveryInfo
}

// RecoveryInfo says what Recover found, for the engine's log lines and for
// checks.
type RecoveryInfo struct {
	// Manifest is the path of the manifest replayed.
	Manifest string
	// SyncedLength is the manifest's last synced-length mark, if
	// SyncedLengthKnown.
	SyncedLength      int64
	SyncedLengthKnown bool
	// ValidLength is where the replayed edits end; TailBytes how many
	// bytes after it were dropped as a torn tail (0: the manifest ended
	// cleanly). TailProblem describes the first bad bytes of that tail.
	ValidLength int64
	TailBytes   int64
	TailProblem string
	// Complete is set when the manifest proves it holds every edit whose
	// LogAndApply returned: its synced-length mark was readable and the
	// edits replayed up to it. Orphan tables are then garbage.
	Complete bool
	// OrphanTables are the numbers of the table files no recovered
	// version references, found in the directory (left there).
	OrphanTables []uint64
	// LostTables are the orphan tables Recover moved to lost/ because
	// the manifest did not prove itself complete.
	LostTables []uint64
}

// RecoveryInfo returns what Recover found (zero for a VersionSet that
// Create made).
func (vs *VersionSet) RecoveryInfo() RecoveryInfo { return vs.recovery }

// replayManifest reads every edit of the manifest fileNum and applies them
// in order to an empty version.
func replayManifest(fs vfs.FS, dir string, fileNum uint64) (recoveredState, error) {
	var st recoveredState
	path := FilePath(dir, FileKindManifest, fileNum)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		// Not wrapped: the engine tells "no database" (os.ErrNotExist
		// from CURRENT) from this damaged one.
		return st, base.CorruptionErrorf("manifest: CURRENT names %s, which is missing: %v", path, err)
	} else if err != nil {
		return st, errors.Wrapf(err, "manifest: opening %s", path)
	}
	defer func() { _ = f.Close() }() // read only
	size, err := f.Size()
	if err != nil {
		return st, errors.Wrapf(err, "manifest: reading %s", path)
	}

	st.info.Manifest = path
	st.info.SyncedLength, st.info.SyncedLengthKnown, err = ReadSyncedLength(fs, dir, fileNum)
	if err != nil {
		return st, err
	}

	r := record.NewReader(io.NewSectionReader(f, 0, size))
	b := newVersionBuilder(NewVersion())
	var edit VersionEdit
	edits := 0
	for ; ; edits++ {
		start := r.Offset()
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			err = edit.Decode(rec)
		}
		if err == nil {
			err = base.MarkCorruption(b.apply(&edit))
		}
		if err != nil {
			// Record and decode errors are marked as corruption already;
			// an I/O error stays unmarked.
			return st, errors.Wrapf(err, "manifest: %s: edit %d (at or after offset %d)", path, edits, start)
		}
		if edit.LogNumber != 0 {
			st.logNumber = edit.LogNumber
		}
		if edit.NextFileNum != 0 {
			st.nextFileNum = edit.NextFileNum
		}
		if edit.LastSeqNum != 0 {
			st.lastSeqNum = edit.LastSeqNum
		}
	}
	st.info.ValidLength = r.Offset()
	if st.info.SyncedLengthKnown && st.info.ValidLength < st.info.SyncedLength {
		// The bytes from ValidLength on were covered by a completed sync:
		// no crash can have torn them.
		return st, base.CorruptionErrorf(
			"manifest: %s: corruption at offset %d, within the %d bytes a completed sync covered (edit %d)",
			path, st.info.ValidLength, st.info.SyncedLength, edits)
	}
	if r.TornTail() {
		st.info.TailBytes = size - st.info.ValidLength
		st.info.TailProblem = r.TornTailProblem()
	}
	st.info.Complete = st.info.SyncedLengthKnown
	if edits == 0 {
		return st, base.CorruptionErrorf("manifest: %s holds no version edit", path)
	}
	if st.version, err = b.finish(); err != nil {
		return st, base.MarkCorruption(errors.Wrapf(err, "manifest: %s", path))
	}
	// Never hand out a number in use, even if an edit failed to say so.
	st.nextFileNum = max(st.nextFileNum, fileNum+1, st.logNumber+1)
	for level := range NumLevels {
		for _, t := range st.version.levels[level] {
			st.nextFileNum = max(st.nextFileNum, t.FileNum+1)
		}
	}
	return st, nil
}

// ReadSyncedLength reads the synced-length mark of the log fileNum (a WAL
// or manifest) in dir. A missing file is no mark (ok=false), as is a
// damaged one.
func ReadSyncedLength(fs vfs.FS, dir string, fileNum uint64) (length int64, ok bool, err error) {
	path := FilePath(dir, FileKindSyncedLength, fileNum)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, errors.Wrapf(err, "manifest: opening %s", path)
	}
	defer func() { _ = f.Close() }() // read only
	size, err := f.Size()
	if err != nil {
		return 0, false, errors.Wrapf(err, "manifest: reading %s", path)
	}
	length, ok, err = record.ReadSyncedLength(f, size)
	return length, ok, errors.Wrapf(err, "manifest: %s", path)
}
