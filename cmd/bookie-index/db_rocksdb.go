package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// The `db` read subcommands also read a RocksDB database — a BookKeeper
// bookie's locations or ledgers, before a migration or its .rocksdb-backup
// after — with the read-only reader of package lsm/rocksdb, in the same
// output format, so that the two can be compared line by line:
//
//	bookie-index db props --rocksdb DIR [--json]
//	bookie-index db get   --rocksdb DIR LEDGER ENTRY | --rocksdb DIR KEY
//	bookie-index db floor --rocksdb DIR LEDGER
//	bookie-index db scan  --rocksdb DIR [--from L[:E]] [--to L[:E]] [--hex] [--limit N]

// openRocksDBArg checks the positional argument count (pos holds those
// after --rocksdb DIR) and opens the RocksDB database in dir read-only. It
// never writes to the directory.
func openRocksDBArg(dir string, pos []string, stderr io.Writer, nargs ...int) (rocksDB, []string, error) {
	if err := checkArgCount(pos, "with --rocksdb DIR, ", "more argument(s)", nargs...); err != nil {
		return rocksDB{}, nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return rocksDB{}, nil, errors.Newf("%s: no such database directory", dir)
	}
	db, err := rocksdb.Open(vfs.Default, dir)
	if err != nil {
		return rocksDB{}, nil, err
	}
	for _, t := range db.Props().Torn {
		fmt.Fprintf(stderr, "warning: %s: %d bytes from offset %d ignored (a torn last record)\n", t.File, t.Bytes, t.Offset)
	}
	return rocksDB{db}, pos, nil
}

// refuseRocksDB fails for a directory that holds a RocksDB database
// (ondisk.IsRocksDBDir: IDENTITY or OPTIONS-* files, which our engine
// never writes), which our engine would misread ("unknown tag").
func refuseRocksDB(dir string) error {
	rocks, err := ondisk.IsRocksDBDir(vfs.Default, dir)
	if err != nil || !rocks {
		return err
	}
	return usageErrorf("%s holds a RocksDB database (BookKeeper's), not one of ours: "+
		"db props, get, floor and scan read it with --rocksdb %s", dir, dir)
}

// rocksDB is a dbSource on a RocksDB database.
type rocksDB struct{ *rocksdb.DB }

func (db rocksDB) get(key []byte) ([]byte, error) {
	v, err := db.Get(key)
	if errors.Is(err, rocksdb.ErrNotFound) {
		return nil, errKeyNotFound
	}
	return v, err
}

// last walks the range: the reader iterates forward only.
func (db rocksDB) last(lower, upper []byte) (key, value []byte, err error) {
	err = db.scan(lower, upper, func(k, v []byte) bool {
		key, value = append(key[:0], k...), append(value[:0], v...)
		return true
	})
	return key, value, err
}

func (db rocksDB) scan(lower, upper []byte, f func(key, value []byte) bool) error {
	it := db.NewIter()
	if lower != nil {
		it.SeekGE(lower)
	} else {
		it.First()
	}
	for ; it.Valid() && (upper == nil || bytes.Compare(it.Key(), upper) < 0) && f(it.Key(), it.Value()); it.Next() {
	}
	return errors.CombineErrors(it.Err(), it.Close())
}

type rocksPropsJSON struct {
	Dir string `json:"dir"`
	rocksdb.Props
}

// printProps prints what the reader found; a RocksDB table's key range is
// not part of it, so --hex changes nothing.
func (db rocksDB) printProps(stdout io.Writer, dir string, asJSON, _ bool) error {
	p := db.Props()
	if asJSON {
		b, err := json.Marshal(rocksPropsJSON{Dir: dir, Props: p})
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	var tables, entries, bytes uint64
	for _, l := range p.Levels {
		tables += uint64(l.Files)
		entries += l.Entries
		bytes += l.Bytes
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%s: RocksDB, %d tables, %d bytes, %d entries, %d range deletions, last seqnum %d\n", dir, tables, bytes, entries, p.RangeDeletions, p.LastSequence)
	fmt.Fprintf(w, "manifest %s, comparator %s, log number %d, next file number %d; %d WAL operations replayed from %s\n",
		p.Manifest, p.Comparator, p.LogNumber, p.NextFileNumber, p.WALOperations, strings.Join(slices.Clone(p.WALs), ", "))
	fmt.Fprintf(w, "%-6s %7s %14s %12s\n", "level", "tables", "bytes", "entries")
	for _, l := range p.Levels {
		fmt.Fprintf(w, "L%-5d %7d %14d %12d\n", l.Level, l.Files, l.Bytes, l.Entries)
	}
	for _, t := range p.Tables {
		fmt.Fprintf(w, "  L%d %06d.sst %d bytes, %d entries, %d range deletions, format_version %d, %s, %s, %s index",
			t.Level, t.FileNumber, t.Size, t.Entries, t.RangeDeletions, t.FormatVersion, t.Compression, t.Checksum, t.IndexType)
		if t.IndexPartitions > 0 {
			fmt.Fprintf(w, " (%d partitions)", t.IndexPartitions)
		}
		if m := t.MergeOperator; m != "" && m != "nullptr" {
			fmt.Fprintf(w, ", merge operator %s", m)
		}
		fmt.Fprintf(w, ", %d data blocks\n", t.DataBlocks)
	}
	for _, t := range p.Torn {
		fmt.Fprintf(w, "torn: %s: %d bytes from offset %d ignored\n", t.File, t.Bytes, t.Offset)
	}
	return w.Flush()
}
