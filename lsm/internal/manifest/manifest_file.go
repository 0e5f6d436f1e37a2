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
// A torn tail of the manifest (an edit whose LogAndApply never returned)
// is dropped. A missing CURRENT gives an error matching os.ErrNotExist; a
// missing manifest, a malformed CURRENT and damage inside the manifest give
// errors marked base.ErrCorruption that name the file.
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
	if vs.opts.ReadOnly {
		return vs, nil
	}
	vs.writer.Lock()
	defer vs.writer.Unlock()
	if err := vs.rotateLocked(state.version, state.logNumber, state.lastSeqNum); err != nil {
		return nil, errors.Wrapf(err, "manifest: starting a new manifest in %s", dir)
	}
	vs.removeLeftovers()
	return vs, nil
}

// removeLeftovers removes the manifests CURRENT does not name and temp
// files, which crashes during rotation leave behind. It is best effort:
// what it cannot remove now it removes at the next open.
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
	}
}

// manifestWriter appends edits to one manifest file.
type manifestWriter struct {
	path string
	file vfs.File
	log  *record.Writer
	buf  []byte // encoding buffer, reused
}

// createManifest creates a manifest holding snapshot, durably: the file is
// synced, then the directory, so that CURRENT never names a manifest whose
// directory entry could be lost.
func createManifest(fs vfs.FS, dir string, fileNum uint64, snapshot *VersionEdit) (*manifestWriter, error) {
	path := FilePath(dir, FileKindManifest, fileNum)
	f, err := fs.Create(path)
	if err != nil {
		return nil, errors.Wrapf(err, "manifest: creating %s", path)
	}
	m := &manifestWriter{path: path, file: f, log: record.NewWriter(f)}
	if err := m.append(snapshot); err != nil {
		_ = m.close() // the error that matters is err
		return nil, err
	}
	if err := syncDir(fs, dir); err != nil {
		_ = m.close()
		return nil, err
	}
	return m, nil
}

// append writes e as one record and syncs it.
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
	return nil
}

// size returns the length of the manifest.
func (m *manifestWriter) size() int64 { return m.log.Size() }

func (m *manifestWriter) close() error {
	return errors.Wrapf(m.file.Close(), "manifest: closing %s", m.path)
}

// setCurrent makes CURRENT name the manifest fileNum, atomically and
// durably: it writes a temp file, syncs it, renames it over CURRENT and
// syncs the directory. A crash at any point leaves either the old CURRENT
// or the new one.
func setCurrent(fs vfs.FS, dir string, fileNum uint64) error {
	tmp := FilePath(dir, FileKindTemp, fileNum)
	current := FilePath(dir, FileKindCurrent, 0)
	f, err := fs.Create(tmp)
	if err != nil {
		return errors.Wrapf(err, "manifest: creating %s", tmp)
	}
	_, err = io.WriteString(f, FileName(FileKindManifest, fileNum)+"\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fs.Rename(tmp, current)
	}
	if err != nil {
		_ = fs.Remove(tmp) // garbage either way; Recover removes leftovers
		return errors.Wrapf(err, "manifest: writing %s", current)
	}
	return syncDir(fs, dir)
}

// syncDir makes the creations, renames and removals in dir durable.
func syncDir(fs vfs.FS, dir string) error {
	d, err := fs.OpenDir(dir)
	if err != nil {
		return errors.Wrapf(err, "manifest: opening directory %s", dir)
	}
	err = d.Sync()
	// Closing a read-only directory handle cannot lose anything, and a
	// failure here must not report a durable change (a new CURRENT) as
	// failed.
	_ = d.Close()
	return errors.Wrapf(err, "manifest: syncing directory %s", dir)
}

// maxCurrentSize bounds what readCurrent reads: CURRENT holds one name.
const maxCurrentSize = 256

// readCurrent returns the number of the manifest CURRENT names.
func readCurrent(fs vfs.FS, dir string) (uint64, error) {
	path := FilePath(dir, FileKindCurrent, 0)
	f, err := fs.Open(path)
	if err != nil {
		return 0, errors.Wrapf(err, "manifest: no database in %s: opening %s", dir, path)
	}
	defer func() { _ = f.Close() }() // read only
	size, err := f.Size()
	if err != nil {
		return 0, errors.Wrapf(err, "manifest: reading %s", path)
	}
	if size > maxCurrentSize {
		return 0, base.CorruptionErrorf("manifest: %s holds %d bytes, more than a manifest name", path, size)
	}
	buf := make([]byte, size)
	if n, err := f.ReadAt(buf, 0); n < len(buf) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, errors.Wrapf(err, "manifest: reading %s", path)
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
}

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

	r := record.NewReader(io.NewSectionReader(f, 0, size))
	b := newVersionBuilder(NewVersion())
	var edit VersionEdit
	edits := 0
	for ; ; edits++ {
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
			return st, errors.Wrapf(err, "manifest: %s: edit %d", path, edits)
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
