package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// The `db` subcommands also read a RocksDB database — a BookKeeper bookie's
// locations or ledgers, before a migration or its .rocksdb-backup after —
// with the read-only reader of package lsm/rocksdb, in the same output
// format, so that the two can be compared line by line:
//
//	bookie-index db props --rocksdb DIR [--json]
//	bookie-index db get   --rocksdb DIR LEDGER ENTRY | --rocksdb DIR KEY
//	bookie-index db floor --rocksdb DIR LEDGER
//	bookie-index db scan  --rocksdb DIR [--from L[:E]] [--to L[:E]] [--hex] [--limit N]

// withRocksDB runs rocks when args hold --rocksdb, else ours.
func withRocksDB(ours, rocks command) command {
	return func(args []string, stdout, stderr io.Writer) error {
		for _, a := range args {
			if a == "--" {
				break
			}
			if a == "-rocksdb" || a == "--rocksdb" || strings.HasPrefix(a, "-rocksdb=") || strings.HasPrefix(a, "--rocksdb=") {
				return rocks(args, stdout, stderr)
			}
		}
		return ours(args, stdout, stderr)
	}
}

// openRocksDBArg parses flags (with --rocksdb DIR), checks the positional
// argument count and opens the RocksDB database read-only. It never writes
// to the directory.
func openRocksDBArg(args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) (*rocksdb.DB, string, []string, error) {
	dir := fs.String("rocksdb", "", "a RocksDB database directory to read, read-only")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, "", nil, err
	}
	if !slices.Contains(nargs, len(pos)) {
		want := fmt.Sprint(nargs[0])
		if len(nargs) > 1 {
			want = fmt.Sprintf("%d or %d", nargs[1], nargs[0])
		}
		return nil, "", nil, usageErrorf("with --rocksdb DIR, takes %s more argument(s), not %d", want, len(pos))
	}
	if st, err := os.Stat(*dir); err != nil || !st.IsDir() {
		return nil, "", nil, errors.Newf("%s: no such database directory", *dir)
	}
	db, err := rocksdb.Open(vfs.Default, *dir)
	if err != nil {
		return nil, "", nil, err
	}
	for _, t := range db.Props().Torn {
		fmt.Fprintf(stderr, "warning: %s: %d bytes from offset %d ignored (a torn last record)\n", t.File, t.Bytes, t.Offset)
	}
	return db, *dir, pos, nil
}

func rocksGet(args []string, stdout, stderr io.Writer) error {
	db, _, pos, err := openRocksDBArg(args, stderr, flag.NewFlagSet("db get", flag.ContinueOnError), 2, 1)
	if err != nil {
		return err
	}
	defer db.Close()
	var key []byte
	if len(pos) == 1 {
		if key, err = parseKey("KEY", pos[0]); err != nil {
			return err
		}
	} else {
		ledger, err := parseID("LEDGER", pos[0])
		if err != nil {
			return err
		}
		entry, err := parseID("ENTRY", pos[1])
		if err != nil {
			return err
		}
		key = encodeKey(ledger, entry)
	}
	v, err := db.Get(key)
	if errors.Is(err, rocksdb.ErrNotFound) {
		return errors.Newf("%s: not found", describeKey(key))
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, formatLocation(v))
	return nil
}

func rocksFloor(args []string, stdout, stderr io.Writer) error {
	db, _, pos, err := openRocksDBArg(args, stderr, flag.NewFlagSet("db floor", flag.ContinueOnError), 1)
	if err != nil {
		return err
	}
	defer db.Close()
	ledger, err := parseID("LEDGER", pos[0])
	if err != nil {
		return err
	}
	if ledger < 0 {
		return usageErrorf("LEDGER %d is negative (ledger ids are 0 to %d)", ledger, int64(math.MaxInt64))
	}
	// The reader iterates forward only: walk the ledger's entries 0 to
	// MaxInt64 and keep the last.
	lower, upper := entrylocation.LedgerEntryRange(ledger)
	it := db.NewIter()
	defer it.Close()
	var last, value []byte
	for it.SeekGE(lower[:]); it.Valid() && bytes.Compare(it.Key(), upper[:]) < 0; it.Next() {
		last, value = append(last[:0], it.Key()...), append(value[:0], it.Value()...)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if last == nil {
		return errors.Newf("ledger %d has no entries", ledger)
	}
	fmt.Fprintf(stdout, "%d %s\n", int64(binary.BigEndian.Uint64(last[8:])), formatLocation(value))
	return nil
}

func rocksScan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db scan", flag.ContinueOnError)
	from := fs.String("from", "", "first key, LEDGER or LEDGER:ENTRY (inclusive)")
	to := fs.String("to", "", "end key, LEDGER or LEDGER:ENTRY (exclusive)")
	asHex := fs.Bool("hex", false, "print keys and values in hex")
	limit := fs.Int("limit", 0, "stop after this many entries (0: all)")
	db, _, _, err := openRocksDBArg(args, stderr, fs, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	lower, err := parseBound("from", *from)
	if err != nil {
		return err
	}
	upper, err := parseBound("to", *to)
	if err != nil {
		return err
	}
	it := db.NewIter()
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	if lower != nil {
		it.SeekGE(lower)
	} else {
		it.First()
	}
	for ; it.Valid() && (upper == nil || bytes.Compare(it.Key(), upper) < 0) && (*limit <= 0 || n < *limit); it.Next() {
		if *asHex {
			fmt.Fprintf(w, "%s %s\n", hex.EncodeToString(it.Key()), hex.EncodeToString(it.Value()))
		} else {
			fmt.Fprintf(w, "%s %s\n", formatKey(it.Key()), formatValue(it.Value()))
		}
		n++
	}
	if err := errors.CombineErrors(it.Err(), it.Close()); err != nil {
		return err
	}
	return w.Flush()
}

type rocksPropsJSON struct {
	Dir string `json:"dir"`
	rocksdb.Props
}

func rocksProps(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db props", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	db, dir, _, err := openRocksDBArg(args, stderr, fs, 0)
	if err != nil {
		return err
	}
	defer db.Close()
	p := db.Props()
	if *asJSON {
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
		p.Manifest, p.Comparator, p.LogNumber, p.NextFileNumber, p.WALOperations, strings.Join(append([]string{}, p.WALs...), ", "))
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
