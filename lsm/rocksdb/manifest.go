package rocksdb

import (
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// bytewiseComparator is the name RocksDB's default comparator records.
const bytewiseComparator = "leveldb.BytewiseComparator"

// cfState is one column family as the MANIFEST leaves it.
type cfState struct {
	name      string
	logNumber uint64
	files     map[uint64]*fileMeta
}

// version is the state the MANIFEST describes: the default column family's
// live tables and the numbers that bound the WALs to replay.
type version struct {
	manifest       string
	comparator     string
	logNumber      uint64 // WALs numbered below hold only flushed data
	prevLogNumber  uint64
	nextFileNumber uint64
	lastSequence   uint64
	minLogNumber   uint64 // the smallest log number of the live column families
	files          [][]*fileMeta
	cfs            map[uint32]*cfState
	torn           *TornTail // the MANIFEST's ignored last record
	// Whether any edit set these: a MANIFEST without them is damaged.
	hasNextFileNumber, hasLastSequence, hasLogNumber bool
}

// readCurrent returns the MANIFEST name that the CURRENT file points at.
func readCurrent(fs vfs.FS, dir string) (string, error) {
	name := filepath.Join(dir, "CURRENT")
	data, err := vfs.ReadFile(fs, name, 4096)
	switch {
	case errors.Is(err, vfs.ErrFileTooLarge):
		return "", corruptf("%v", err)
	case err != nil:
		return "", errors.Wrap(err, "rocksdb")
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") || !strings.HasPrefix(s, "MANIFEST-") || strings.ContainsAny(s[:len(s)-1], "/\\\n") {
		return "", corruptf("%s: %q does not name a MANIFEST", name, s)
	}
	return s[:len(s)-1], nil
}

// openSized opens name for reading and returns its size.
func openSized(fs vfs.FS, name string) (vfs.File, int64, error) {
	f, err := fs.Open(name)
	if err != nil {
		return nil, 0, errors.Wrapf(err, "rocksdb: open %s", name)
	}
	size, err := f.Size()
	if err != nil {
		_ = f.Close()
		return nil, 0, errors.Wrapf(err, "rocksdb: %s", name)
	}
	return f, size, nil
}

// readManifest replays the MANIFEST's version edits.
func readManifest(fs vfs.FS, dir, manifest string) (*version, error) {
	name := filepath.Join(dir, manifest)
	f, size, err := openSized(fs, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v := &version{manifest: manifest, cfs: map[uint32]*cfState{0: {name: "default", files: map[uint64]*fileMeta{}}}}
	r := newLogReader(name, f, size, 0)
	var group []*versionEdit // an atomic group applies whole or not at all
	for {
		rec, off, err := r.next()
		if err == io.EOF {
			if r.torn >= 0 {
				v.torn = &TornTail{File: manifest, Offset: r.torn, Bytes: size - r.torn}
			}
			break
		} else if err != nil {
			return nil, err
		}
		e, err := decodeVersionEdit(name, off, rec)
		if err != nil {
			return nil, err
		}
		if e.inAtomicGroup {
			group = append(group, e)
			if e.remainingInGroup > 0 {
				continue
			}
		}
		if len(group) == 0 {
			group = append(group, e)
		}
		for _, g := range group {
			if err := v.apply(name, off, g); err != nil {
				return nil, err
			}
		}
		group = group[:0]
	}
	return v, v.finish(name)
}

func (v *version) apply(name string, off int64, e *versionEdit) error {
	if e.isCFAdd {
		if _, ok := v.cfs[e.cf]; ok {
			return corruptf("%s: offset %d: column family %d added twice", name, off, e.cf)
		}
		v.cfs[e.cf] = &cfState{name: e.cfAdd, files: map[uint64]*fileMeta{}}
		return nil
	}
	cf, ok := v.cfs[e.cf]
	if !ok {
		return corruptf("%s: offset %d: edit of unknown column family %d", name, off, e.cf)
	}
	if e.isCFDrop {
		delete(v.cfs, e.cf)
		return nil
	}
	if e.hasComparator && e.cf == 0 {
		v.comparator = e.comparator
	}
	if e.hasLogNumber {
		cf.logNumber = e.logNumber
		v.hasLogNumber = true
	}
	if e.hasPrevLogNumber {
		v.prevLogNumber = e.prevLogNumber
	}
	if e.hasNextFileNumber {
		v.nextFileNumber, v.hasNextFileNumber = e.nextFileNumber, true
	}
	if e.hasLastSequence {
		v.lastSequence, v.hasLastSequence = e.lastSequence, true
	}
	for _, d := range e.deleted {
		f, ok := cf.files[d.num]
		if !ok || f.level != d.level {
			return corruptf("%s: offset %d: deletes table %06d from L%d where it is not", name, off, d.num, d.level)
		}
		delete(cf.files, d.num)
	}
	for i := range e.added {
		f := e.added[i]
		cf.files[f.num] = &f
	}
	return nil
}

// finish checks the replayed state and orders the default column family's
// tables: L0 newest first, other levels by smallest key.
func (v *version) finish(name string) error {
	if v.comparator != "" && v.comparator != bytewiseComparator {
		return unsupportedf("%s: comparator %q (only %s)", name, v.comparator, bytewiseComparator)
	}
	// As RocksDB's recovery, refuse a MANIFEST that never set these: it is
	// cut short or damaged (a bad length can look like a torn tail).
	switch {
	case !v.hasNextFileNumber:
		return corruptf("%s: no next file number in the MANIFEST", name)
	case !v.hasLogNumber:
		return corruptf("%s: no log number in the MANIFEST", name)
	case !v.hasLastSequence:
		return corruptf("%s: no last sequence number in the MANIFEST", name)
	}
	v.minLogNumber = ^uint64(0)
	for id, cf := range v.cfs {
		if cf.logNumber < v.minLogNumber {
			v.minLogNumber = cf.logNumber
		}
		if id != 0 && len(cf.files) > 0 {
			return unsupportedf("%s: column family %q (id %d) holds %d tables; only the default column family is read", name, cf.name, id, len(cf.files))
		}
	}
	def, ok := v.cfs[0]
	if !ok {
		return corruptf("%s: the default column family was dropped", name)
	}
	v.logNumber = def.logNumber
	for _, f := range def.files {
		for len(v.files) <= f.level {
			v.files = append(v.files, nil)
		}
		v.files[f.level] = append(v.files[f.level], f)
	}
	for level, fs := range v.files {
		if level == 0 {
			sort.Slice(fs, func(i, j int) bool {
				if fs[i].largestSeq != fs[j].largestSeq {
					return fs[i].largestSeq > fs[j].largestSeq
				}
				return fs[i].num > fs[j].num
			})
			continue
		}
		sort.Slice(fs, func(i, j int) bool {
			a, _ := parseInternalKey(fs[i].smallest)
			b, _ := parseInternalKey(fs[j].smallest)
			return compareInternal(a, b) < 0
		})
	}
	return nil
}
