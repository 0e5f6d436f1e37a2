package rocksdb

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// DB is a RocksDB database opened read-only: the MANIFEST's tables, opened,
// and the WAL tail replayed into memory. It never writes to the directory.
// A DB is immutable once open; iterators on it may run concurrently.
type DB struct {
	dir       string
	v         *version
	tables    [][]*table // per level; L0 newest first
	mem       []memEntry // WAL operations, sorted
	rangeDels *rangeDels
	props     Props
}

// Props describes an open database.
type Props struct {
	Manifest       string
	Comparator     string
	LogNumber      uint64 // WALs numbered from here on were replayed
	PrevLogNumber  uint64
	NextFileNumber uint64
	LastSequence   uint64 // the newest sequence number, WAL included
	WALs           []string
	WALOperations  int // puts, deletions and range deletions replayed from the WALs
	RangeDeletions int // range tombstones, in tables and WALs
	Levels         []LevelProps
	Tables         []TableProps
	// Torn lists the log files (WALs, the MANIFEST) whose last record was
	// cut short or failed its checksum at the end of the file, as a crash
	// leaves it. RocksDB ignores such a record, and so does this reader;
	// damage to a length field near the end of a file looks the same, so a
	// migration should report these.
	Torn []TornTail
}

// TornTail is the ignored end of a log file.
type TornTail struct {
	File   string
	Offset int64 // where the ignored record starts
	Bytes  int64 // from there to the end of the file
}

// LevelProps sums one level's tables.
type LevelProps struct {
	Level   int
	Files   int
	Bytes   uint64
	Entries uint64
}

// Open opens the RocksDB database in dir on fs read-only: it reads CURRENT,
// replays the MANIFEST, opens every live table of the default column family
// and replays the WALs that hold unflushed writes.
func Open(fs vfs.FS, dir string) (_ *DB, err error) {
	manifest, err := readCurrent(fs, dir)
	if err != nil {
		return nil, err
	}
	v, err := readManifest(fs, dir, manifest)
	if err != nil {
		return nil, err
	}
	db := &DB{dir: dir, v: v}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	db.props = Props{Manifest: manifest, Comparator: v.comparator, LogNumber: v.logNumber,
		PrevLogNumber: v.prevLogNumber, NextFileNumber: v.nextFileNumber, LastSequence: v.lastSequence}
	if v.torn != nil {
		db.props.Torn = append(db.props.Torn, *v.torn)
	}
	var tombs []tombstone
	for level, files := range v.files {
		lp := LevelProps{Level: level}
		var ts []*table
		for _, f := range files {
			t, err := openTable(fs, tablePath(fs, dir, f.num), f)
			if err != nil {
				return nil, err
			}
			ts = append(ts, t)
			for _, rd := range t.rangeDels {
				if rd, ok := truncate(rd, f); ok {
					tombs = append(tombs, rd)
				}
			}
			lp.Files++
			lp.Bytes += f.size
			lp.Entries += t.props.Entries
			db.props.Tables = append(db.props.Tables, t.props)
			db.props.RangeDeletions += len(t.rangeDels)
		}
		db.tables = append(db.tables, ts)
		db.props.Levels = append(db.props.Levels, lp)
	}
	walTombs, err := db.replayWALs(fs)
	if err != nil {
		return nil, err
	}
	db.props.RangeDeletions += len(walTombs)
	db.rangeDels = newRangeDels(append(tombs, walTombs...))
	return db, nil
}

// tablePath names table num: RocksDB's .sst, or LevelDB's .ldb if only that
// exists.
func tablePath(fs vfs.FS, dir string, num uint64) string {
	p := filepath.Join(dir, fmt.Sprintf("%06d.sst", num))
	if _, err := fs.Stat(p); err != nil {
		if q := filepath.Join(dir, fmt.Sprintf("%06d.ldb", num)); exists(fs, q) {
			return q
		}
	}
	return p
}

func exists(fs vfs.FS, p string) bool { _, err := fs.Stat(p); return err == nil }

// replayWALs reads the WALs RocksDB would replay on open, in order, into
// db.mem, and returns their range deletions. RocksDB reads every WAL in the
// directory but skips a column family's writes in WALs numbered below its
// log number; WALs below the smallest such number are therefore skipped
// unread (they may be recycled files holding old records). The previous
// log number is LevelDB's and plays no part.
func (db *DB) replayWALs(fs vfs.FS) ([]tombstone, error) {
	names, err := fs.List(db.dir)
	if err != nil {
		return nil, errors.Wrapf(err, "rocksdb: list %s", db.dir)
	}
	type wal struct {
		num  uint64
		name string
	}
	var wals []wal
	for _, n := range names {
		s, ok := strings.CutSuffix(n, ".log")
		if !ok {
			continue
		}
		num, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			continue
		}
		if num >= db.v.minLogNumber {
			wals = append(wals, wal{num, n})
		}
	}
	sort.Slice(wals, func(i, j int) bool { return wals[i].num < wals[j].num })
	var tombs []tombstone
	last := db.v.lastSequence
	for _, w := range wals {
		path := filepath.Join(db.dir, w.name)
		f, size, err := openSized(fs, path)
		if err != nil {
			return nil, err
		}
		db.props.WALs = append(db.props.WALs, w.name)
		r := newLogReader(path, f, size, w.num)
		for {
			rec, off, err := r.next()
			if err == io.EOF {
				break
			} else if err != nil {
				f.Close()
				return nil, err
			}
			err = decodeBatch(path, off, rec, func(op batchOp) error {
				if op.cf != 0 {
					if cf, ok := db.v.cfs[op.cf]; ok && w.num >= cf.logNumber {
						return unsupportedf("%s: offset %d: write to column family %q (id %d); only the default column family is read", path, off, cf.name, op.cf)
					}
					return nil // a dropped or flushed column family
				}
				if w.num < db.v.logNumber {
					return nil // flushed already
				}
				if op.seq > last {
					last = op.seq
				}
				db.props.WALOperations++
				if op.kind == typeRangeDeletion {
					tombs = append(tombs, tombstone{start: bytes.Clone(op.key), end: bytes.Clone(op.value), seq: op.seq})
					return nil
				}
				db.mem = append(db.mem, memEntry{
					key:   internalKey{user: bytes.Clone(op.key), seq: op.seq, kind: op.kind},
					value: bytes.Clone(op.value),
				})
				return nil
			})
			if err != nil {
				f.Close()
				return nil, err
			}
		}
		if r.torn >= 0 {
			db.props.Torn = append(db.props.Torn, TornTail{File: w.name, Offset: r.torn, Bytes: size - r.torn})
		}
		if err := f.Close(); err != nil {
			return nil, errors.Wrapf(err, "rocksdb: close %s", path)
		}
	}
	sort.SliceStable(db.mem, func(i, j int) bool { return compareInternal(db.mem[i].key, db.mem[j].key) < 0 })
	db.props.LastSequence = last
	return tombs, nil
}

// Props returns the database's description. The caller must not modify it.
func (db *DB) Props() Props { return db.props }

// Close closes the tables.
func (db *DB) Close() error {
	var err error
	for _, ts := range db.tables {
		for _, t := range ts {
			err = errors.CombineErrors(err, t.Close())
		}
	}
	db.tables = nil
	return err
}

// NewIter returns an iterator over the visible keys. It must be positioned
// with First or SeekGE before use.
func (db *DB) NewIter() *Iter { return db.newIter(nil) }

// newIter returns an iterator over the memtable and the tables that
// include (nil: all tables).
func (db *DB) newIter(include func(*fileMeta) bool) *Iter {
	m := &mergingIter{}
	m.children = append(m.children, &memIter{entries: db.mem})
	for _, ts := range db.tables {
		for _, t := range ts {
			if include == nil || include(t.meta) {
				m.children = append(m.children, &tableIter{t: t, block: len(t.index)})
			}
		}
	}
	return &Iter{db: db, m: m}
}

// Get returns a copy of the value of key, or ErrNotFound. It looks the key
// up in the WAL's operations and in each table whose key range holds it
// (one data block each, searched by its restart points) and keeps the
// newest version.
func (db *DB) Get(key []byte) ([]byte, error) {
	var best internalKey
	var value []byte
	found := false
	i := sort.Search(len(db.mem), func(i int) bool { return bytes.Compare(db.mem[i].key.user, key) >= 0 })
	if i < len(db.mem) && bytes.Equal(db.mem[i].key.user, key) {
		best, value, found = db.mem[i].key, db.mem[i].value, true
	}
	for _, ts := range db.tables {
		for _, t := range ts {
			if !t.mayContain(key) {
				continue
			}
			ik, v, ok, err := t.get(key)
			if err != nil {
				return nil, err
			}
			if ok && (!found || ik.seq > best.seq) {
				best, value, found = ik, v, true
			}
		}
	}
	if !found || best.kind != typeValue || db.rangeDels.maxSeq(key) > best.seq {
		return nil, ErrNotFound
	}
	return bytes.Clone(value), nil
}

// Scan calls fn for every visible key and value in key order; fn must not
// keep the slices. An error from fn stops the scan and is returned.
func (db *DB) Scan(fn func(key, value []byte) error) error {
	it := db.NewIter()
	for it.First(); it.Valid(); it.Next() {
		if err := fn(it.Key(), it.Value()); err != nil {
			return err
		}
	}
	return it.Err()
}
