package lsm

import (
	"io"
	"os"

	"github.com/bookie-index/bookie-index/lsm/internal/batch"
	"github.com/bookie-index/bookie-index/lsm/internal/manifest"
	"github.com/bookie-index/bookie-index/lsm/internal/record"
	"github.com/cockroachdb/errors"
)

// The dump functions read a database's manifest and WALs record by record
// with the decoders recovery uses, for operators and tests: they change
// nothing, need no lock and stop at the first record that does not decode
// (the callback has seen every record before it), returning an error that
// names the file and offset. A torn tail ends the dump without an error;
// DumpEnd says where the valid records end.

// ManifestEdit is one edit of a manifest (see docs/format.md). Zero
// counters mean "unchanged".
type ManifestEdit struct {
	// Index counts the manifest's edits from 0; Offset is where the
	// edit's record starts in the file.
	Index  int
	Offset int64

	LogNumber   uint64
	NextFileNum uint64
	LastSeqNum  uint64
	// CompactPointers, per level, the user key where the last compaction
	// of the level ended.
	CompactPointers []ManifestCompactPointer
	DeletedTables   []ManifestDeletedTable
	// NewTables carry what the manifest records of a table (no
	// properties, which live in the table file).
	NewTables []TableInfo
}

// ManifestCompactPointer is one compact pointer of an edit.
type ManifestCompactPointer struct {
	Level int
	Key   []byte
}

// ManifestDeletedTable is one table an edit removes from a level.
type ManifestDeletedTable struct {
	Level   int
	FileNum uint64
}

// DumpEnd says how a dumped log ended.
type DumpEnd struct {
	Path string
	// Size is the file's length, ValidLength where its last decodable
	// record ends.
	Size, ValidLength int64
	// TornTail describes the bytes after ValidLength if they are not a
	// clean end (a torn or damaged tail); empty otherwise.
	TornTail string
}

// DumpManifest hands every edit of the manifest CURRENT names in dir to fn,
// in order.
func DumpManifest(fs FS, dir string, fn func(ManifestEdit) error) (DumpEnd, error) {
	num, err := manifest.CurrentManifest(fs, dir)
	if err != nil {
		return DumpEnd{}, err
	}
	path := manifest.FilePath(dir, manifest.FileKindManifest, num)
	i := 0
	return dumpLog(fs, path, func(offset int64, rec []byte) error {
		var e manifest.VersionEdit
		if err := e.Decode(rec); err != nil {
			return err
		}
		me := ManifestEdit{Index: i, Offset: offset, LogNumber: e.LogNumber, NextFileNum: e.NextFileNum, LastSeqNum: uint64(e.LastSeqNum)}
		i++
		for _, cp := range e.CompactPointers {
			me.CompactPointers = append(me.CompactPointers, ManifestCompactPointer{Level: cp.Level, Key: cp.Key.UserKey})
		}
		for _, dt := range e.DeletedTables {
			me.DeletedTables = append(me.DeletedTables, ManifestDeletedTable{Level: dt.Level, FileNum: dt.FileNum})
		}
		for _, nt := range e.NewTables {
			m := nt.Meta
			me.NewTables = append(me.NewTables, TableInfo{
				Level: nt.Level, FileNum: m.FileNum, Path: manifest.FilePath(dir, manifest.FileKindTable, m.FileNum),
				Size: m.Size, Entries: m.Entries, RangeDeletions: m.RangeDeletions,
				Smallest: m.Smallest.UserKey, Largest: m.Largest.UserKey,
				SmallestSeqNum: uint64(m.SmallestSeqNum), LargestSeqNum: uint64(m.LargestSeqNum),
			})
		}
		return fn(me)
	})
}

// WALBatch is one batch of a WAL.
type WALBatch struct {
	// Offset is where the batch's record starts in the WAL.
	Offset int64
	// SeqNum is the sequence number of the first operation; operation i
	// has SeqNum+i.
	SeqNum uint64
	Ops    []WALOp
}

// WALOp is one operation of a batch. Key and Value alias the record and
// are valid only during the callback.
type WALOp struct {
	// Kind is "SET", "DEL" or "RANGEDEL" (Value is then the end key).
	Kind  string
	Key   []byte
	Value []byte
}

// WALFiles returns the paths of the WALs in dir, oldest first.
func WALFiles(fs FS, dir string) ([]string, error) {
	names, err := fs.List(dir)
	if err != nil {
		return nil, errors.Wrapf(err, "lsm: listing %s", dir)
	}
	var paths []string
	for _, name := range names { // sorted, and the numbers have a fixed width
		if kind, num, ok := manifest.ParseFileName(name); ok && kind == manifest.FileKindLog {
			paths = append(paths, manifest.FilePath(dir, kind, num))
		}
	}
	return paths, nil
}

// DumpWAL hands every batch of the WAL at path to fn, in order.
func DumpWAL(fs FS, path string, fn func(WALBatch) error) (DumpEnd, error) {
	var ops []WALOp
	return dumpLog(fs, path, func(offset int64, rec []byte) error {
		br, err := batch.Decode(rec)
		if err != nil {
			return err
		}
		ops = ops[:0]
		for {
			kind, key, value, ok, err := br.Next()
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			ops = append(ops, WALOp{Kind: kind.String(), Key: key, Value: value})
		}
		return fn(WALBatch{Offset: offset, SeqNum: uint64(br.SeqNum()), Ops: ops})
	})
}

// dumpLog reads the records of the log at path, handing each to fn with
// its offset.
func dumpLog(fs FS, path string, fn func(offset int64, rec []byte) error) (DumpEnd, error) {
	end := DumpEnd{Path: path}
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return end, errors.Newf("lsm: %s: no such file", path)
	} else if err != nil {
		return end, errors.Wrapf(err, "lsm: opening %s", path)
	}
	defer func() { _ = f.Close() }() // read only
	if end.Size, err = f.Size(); err != nil {
		return end, errors.Wrapf(err, "lsm: reading %s", path)
	}
	r := record.NewReader(io.NewSectionReader(f, 0, end.Size))
	for n := 0; ; n++ {
		offset := r.Offset()
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			err = fn(offset, rec)
		}
		if err != nil {
			end.ValidLength = offset
			return end, errors.Wrapf(err, "lsm: %s: record %d at offset %d", path, n, offset)
		}
	}
	end.ValidLength = r.Offset()
	if r.TornTail() {
		end.TornTail = r.TornTailProblem()
	}
	return end, nil
}
