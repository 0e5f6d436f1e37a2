package manifest

import (
	"sync"
	"sync/atomic"

	"github.com/bookie-index/bookie-index/lsm/internal/base"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DefaultMaxManifestSize is the default Options.MaxManifestSize.
const DefaultMaxManifestSize = 64 << 20

// Options configure a VersionSet.
type Options struct {
	// MaxManifestSize bounds the manifest: once it holds this many bytes,
	// the next LogAndApply writes a new manifest holding a snapshot of the
	// state instead of appending. Zero means DefaultMaxManifestSize.
	MaxManifestSize int64
	// ReadOnly makes Recover write nothing (no new manifest, no cleanup)
	// and LogAndApply fail. For tools that inspect a database.
	ReadOnly bool
}

func (o *Options) withDefaults() Options {
	var opts Options
	if o != nil {
		opts = *o
	}
	if opts.MaxManifestSize <= 0 {
		opts.MaxManifestSize = DefaultMaxManifestSize
	}
	return opts
}

// VersionSet owns the manifest of a database directory and the current
// Version, and tracks which tables the live versions reference. See the
// package documentation for the protocol and the crash guarantees.
//
// LogAndApply calls must be serialized by the caller (the engine holds its
// mutex around them); the VersionSet also takes its own lock, so a mistake
// costs throughput rather than the manifest. Every other method is safe for
// concurrent use, including with LogAndApply.
type VersionSet struct {
	fs   vfs.FS
	dir  string
	opts Options
	// recovery is what Recover found; set before the VersionSet is shared.
	recovery RecoveryInfo

	// nextFileNum is the next file number to hand out; lastSeqNum the
	// largest sequence number used (a base.SeqNum).
	nextFileNum atomic.Uint64
	lastSeqNum  atomic.Uint64

	// writer serializes LogAndApply and Close and guards the manifest being
	// written. It is held across manifest I/O, so mu must never be held
	// while taking it.
	writer struct {
		sync.Mutex
		// manifest is nil for a read-only VersionSet.
		manifest *manifestWriter
		// err is the first failure to write the manifest; sticky, because
		// what reached the disk is unknown.
		err error
		// rotate is set by a write that failed for lack of space: the
		// manifest's tail is unknown, so the next LogAndApply writes a new
		// manifest instead of appending (never retrying a write or sync
		// on the file that failed one).
		rotate bool
		closed bool
	}

	// mu guards the state readers see. It is never held across I/O.
	mu struct {
		sync.Mutex
		current         *Version
		logNumber       uint64
		manifestFileNum uint64
		// tableRefs counts, per table, the live versions that hold it;
		// live means installed here and not yet fully unreferenced.
		tableRefs map[uint64]int
		// obsolete collects the tables whose count fell to zero, until
		// TakeObsoleteTables hands them out.
		obsolete []*TableMeta
	}
}

func newVersionSet(fs vfs.FS, dir string, opts *Options) *VersionSet {
	vs := &VersionSet{fs: fs, dir: dir, opts: opts.withDefaults()}
	vs.mu.tableRefs = map[uint64]int{}
	return vs
}

// Current returns the current version with a reference the caller must
// drop with Unref.
func (vs *VersionSet) Current() *Version {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	// The VersionSet's own reference keeps current alive, so Ref is safe.
	vs.mu.current.Ref()
	return vs.mu.current
}

// LogAndApply applies edit to the current version, appends it to the
// manifest as one record, syncs the manifest, and only then installs the
// result as the current version. When it returns nil the edit is durable.
//
// The manifest copy of the edit also records the VersionSet's NextFileNum
// and LastSeqNum (raised, if needed, to cover the edit's tables); the
// caller's edit is not modified. An edit that does not apply (a deleted
// table missing, a duplicate file number, overlapping L1+ tables, a
// LogNumber going backwards) returns an error and changes nothing. A
// failure to write the manifest leaves the edit maybe durable, maybe not:
// the engine must not delete the files the edit added until a later
// LogAndApply succeeds. A failure for lack of space (vfs.IsNoSpace) is
// returned matching base.ErrNoSpace and is not sticky: the next
// LogAndApply writes a new manifest holding a snapshot of the state (the
// failed edit included if it is retried), so nothing is appended behind
// the failed write. Any other failure is sticky: every later LogAndApply
// fails, and the engine must stop and reopen the database.
func (vs *VersionSet) LogAndApply(edit *VersionEdit) error {
	vs.writer.Lock()
	defer vs.writer.Unlock()
	switch {
	case vs.writer.closed:
		return errors.Wrap(base.ErrClosed, "manifest: LogAndApply")
	case vs.writer.err != nil:
		return vs.writer.err
	case vs.writer.manifest == nil:
		return errors.New("manifest: LogAndApply on a read-only VersionSet")
	}
	// Only LogAndApply replaces current, and the VersionSet's reference
	// keeps it alive, so it can be used after unlocking.
	vs.mu.Lock()
	cur, logNumber := vs.mu.current, vs.mu.logNumber
	vs.mu.Unlock()

	if edit.LogNumber != 0 {
		if edit.LogNumber < logNumber {
			return errors.Newf("manifest: log number %d is older than the current log number %d",
				edit.LogNumber, logNumber)
		}
		logNumber = edit.LogNumber
	}
	v, err := cur.Apply(edit)
	if err != nil {
		return err
	}

	// Make the recorded counters cover everything the edit mentions, so
	// that recovery never hands out a number already in use.
	e := *edit
	vs.MarkFileNumUsed(logNumber)
	if e.NextFileNum != 0 {
		vs.MarkFileNumUsed(e.NextFileNum - 1)
	}
	vs.raiseLastSeqNum(e.LastSeqNum)
	for _, n := range e.NewTables {
		vs.MarkFileNumUsed(n.Meta.FileNum)
		vs.raiseLastSeqNum(n.Meta.LargestSeqNum)
	}
	e.NextFileNum = vs.nextFileNum.Load()
	e.LastSeqNum = vs.LastSeqNum()

	retried := vs.writer.rotate
	if retried || vs.writer.manifest.size() >= vs.opts.MaxManifestSize {
		err = vs.rotateLocked(v, logNumber, e.LastSeqNum)
	} else {
		err = vs.writer.manifest.append(&e)
	}
	if err != nil {
		if vfs.IsNoSpace(err) {
			vs.writer.rotate = true
			return base.NoSpaceError("manifest: LogAndApply failed for lack of space; the next one writes a new manifest", err)
		}
		vs.writer.err = errors.WithMessage(err, "manifest: LogAndApply failed; the database must be reopened")
		return vs.writer.err
	}
	vs.writer.rotate = false
	vs.install(v, logNumber)
	if retried {
		// Manifests of failed rotations are garbage now.
		vs.removeLeftovers()
	}
	return nil
}

// rotateLocked writes a new manifest holding a snapshot of v and the
// counters, makes CURRENT name it, and removes the old manifest.
// REQUIRES: vs.writer is held.
func (vs *VersionSet) rotateLocked(v *Version, logNumber uint64, lastSeqNum base.SeqNum) error {
	fileNum := vs.NextFileNum()
	snapshot := VersionEdit{
		LogNumber:   logNumber,
		NextFileNum: vs.nextFileNum.Load(),
		LastSeqNum:  lastSeqNum,
	}
	for level := range NumLevels {
		if cp := v.compactPointers[level]; cp.UserKey != nil {
			snapshot.CompactPointers = append(snapshot.CompactPointers, CompactPointer{Level: level, Key: cp})
		}
		for _, t := range v.levels[level] {
			snapshot.NewTables = append(snapshot.NewTables, NewTable{Level: level, Meta: t})
		}
	}
	m, err := createManifest(vs.fs, vs.dir, fileNum, &snapshot)
	if err != nil {
		return err
	}
	if err := setCurrent(vs.fs, vs.dir, fileNum); err != nil {
		m.close()
		return err
	}
	// The new manifest is durable and named by a durable CURRENT: the old
	// one is garbage. Failing to remove it loses nothing; Recover removes
	// leftover manifests.
	if old := vs.writer.manifest; old != nil {
		old.close()
	}
	vs.writer.manifest = m
	vs.mu.Lock()
	oldFileNum := vs.mu.manifestFileNum
	vs.mu.manifestFileNum = fileNum
	vs.mu.Unlock()
	if oldFileNum != 0 {
		_ = vs.fs.Remove(FilePath(vs.dir, FileKindManifest, oldFileNum))
		_ = vs.fs.Remove(FilePath(vs.dir, FileKindSyncedLength, oldFileNum))
	}
	return nil
}

// install makes v the current version, taking over its reference, and
// drops the VersionSet's reference to the previous one.
func (vs *VersionSet) install(v *Version, logNumber uint64) {
	vs.mu.Lock()
	v.vs = vs
	for level := range NumLevels {
		for _, t := range v.levels[level] {
			vs.mu.tableRefs[t.FileNum]++
		}
	}
	old := vs.mu.current
	vs.mu.current = v
	vs.mu.logNumber = logNumber
	vs.mu.Unlock()
	if old != nil {
		old.Unref()
	}
}

// releaseVersion is called by Version.Unref when the last reference to v is
// dropped.
func (vs *VersionSet) releaseVersion(v *Version) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for level := range NumLevels {
		for _, t := range v.levels[level] {
			n := vs.mu.tableRefs[t.FileNum] - 1
			if n > 0 {
				vs.mu.tableRefs[t.FileNum] = n
				continue
			}
			delete(vs.mu.tableRefs, t.FileNum)
			vs.mu.obsolete = append(vs.mu.obsolete, t)
		}
	}
}

// LiveTables returns the file numbers of the tables some live version
// holds. A table file in the directory that is neither live nor being
// written by the engine is garbage.
func (vs *VersionSet) LiveTables() map[uint64]bool {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	live := make(map[uint64]bool, len(vs.mu.tableRefs))
	for fileNum := range vs.mu.tableRefs {
		live[fileNum] = true
	}
	return live
}

// TakeObsoleteTables returns the tables that were in some version and are
// in no live version any more, each once: their files may be deleted.
func (vs *VersionSet) TakeObsoleteTables() []*TableMeta {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	obsolete := vs.mu.obsolete
	vs.mu.obsolete = nil
	return obsolete
}

// NextFileNum allocates a file number for a new table, WAL or manifest.
func (vs *VersionSet) NextFileNum() uint64 { return vs.nextFileNum.Add(1) - 1 }

// MarkFileNumUsed makes sure fileNum is never handed out. At open, the
// engine calls it for every WAL it finds: a WAL created after the last
// manifest edit has a number the manifest does not know.
func (vs *VersionSet) MarkFileNumUsed(fileNum uint64) {
	for {
		next := vs.nextFileNum.Load()
		if next > fileNum || vs.nextFileNum.CompareAndSwap(next, fileNum+1) {
			return
		}
	}
}

// LastSeqNum returns the largest sequence number used.
func (vs *VersionSet) LastSeqNum() base.SeqNum { return base.SeqNum(vs.lastSeqNum.Load()) }

// SetLastSeqNum records the largest sequence number used. It must not go
// backwards; the engine calls it as it publishes batches.
func (vs *VersionSet) SetLastSeqNum(seq base.SeqNum) { vs.lastSeqNum.Store(uint64(seq)) }

func (vs *VersionSet) raiseLastSeqNum(seq base.SeqNum) {
	for {
		last := vs.lastSeqNum.Load()
		if last >= uint64(seq) || vs.lastSeqNum.CompareAndSwap(last, uint64(seq)) {
			return
		}
	}
}

// LogNumber returns the number of the oldest WAL still needed.
func (vs *VersionSet) LogNumber() uint64 {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.mu.logNumber
}

// ManifestFileNum returns the number of the manifest CURRENT names.
func (vs *VersionSet) ManifestFileNum() uint64 {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.mu.manifestFileNum
}

// Close closes the manifest; later LogAndApply calls fail with
// base.ErrClosed. Versions stay usable and may still be unreferenced.
func (vs *VersionSet) Close() error {
	vs.writer.Lock()
	defer vs.writer.Unlock()
	if vs.writer.closed {
		return errors.Wrap(base.ErrClosed, "manifest: VersionSet already closed")
	}
	vs.writer.closed = true
	if m := vs.writer.manifest; m != nil {
		vs.writer.manifest = nil
		return m.close()
	}
	return nil
}
