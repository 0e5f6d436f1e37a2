package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// dbCommands are the subcommands of db. Every one but checkpoint reads a
// database directory no process has open, read-only.
func dbCommands() []subcommand {
	return []subcommand{
		{"props", "DIR [--json] [--hex]", "levels, tables, bytes, entries; each table's key range", dbProps},
		{"get", "DIR LEDGER ENTRY | DIR KEY", "the location of one entry; KEY is LEDGER:ENTRY or the key in hex (32 digits)", dbGet},
		{"floor", "DIR LEDGER", "the last entry of a ledger and its location", dbFloor},
		{"scan", "DIR [--from KEY] [--to KEY] [--hex] [--limit N]", "the entries from --from (inclusive) to --to (exclusive); KEY is LEDGER, LEDGER:ENTRY or hex", dbScan},
		// props, get, floor and scan also take --rocksdb DIR for DIR (db_rocksdb.go).
		{"check", "DIR", "verify tables, WALs, manifest, orphans, lost/; exit 1 listing every problem", dbCheck},
		{"manifest", "DIR [--hex]", "every edit of the current manifest: counters, compact pointers, deleted and new tables", dbManifest},
		{"wal", "DIR [--hex] [--ops=false]", "every batch of every WAL: offset, seqnum and operations", dbWAL},
		{"ledgers", "DIR [--json]", "the ledgers index (<indexDir>/current/ledgers) decoded, one line per ledger", dbLedgers},
		{"checkpoint", "DIR OUT", "a consistent copy of the database in the new directory OUT, tables hard-linked (see docs/operations.md, Backup)", dbCheckpoint},
	}
}

func runDB(args []string, stdout, stderr io.Writer) error {
	return runSubcommand("db", "Inspects a database directory (an entry location or ledgers index) no process has\nopen, read-only, or checkpoints it. props, get, floor and scan read a RocksDB\ndatabase (BookKeeper's) with --rocksdb DIR in place of DIR.", args, stdout, stderr, dbCommands())
}

// offlineDB is a DB opened read-only by a tool, with the lock that keeps
// a live process away until it is closed.
type offlineDB struct {
	*lsm.DB
	unlock func()
}

func (d *offlineDB) Close() error {
	err := d.DB.Close()
	d.unlock()
	return err
}

// openDBArg parses flags, checks the positional argument count and opens
// the DB named by the first one read-only, holding its lock: a directory a
// live process holds is refused, naming the process (see offline_lock.go).
func openDBArg(args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) (*offlineDB, []string, error) {
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, nil, err
	}
	return openDBPositional(pos, stderr, nargs...)
}

// openDBPositional is openDBArg after the flags.
func openDBPositional(pos []string, stderr io.Writer, nargs ...int) (*offlineDB, []string, error) {
	if err := checkDBArgs(pos, nargs...); err != nil {
		return nil, nil, err
	}
	unlock, err := lockForReading(pos[0], stderr)
	if err != nil {
		return nil, nil, err
	}
	d, err := lsm.Open(pos[0], &lsm.Options{ReadOnly: true, BlockCacheSize: 64 << 20, Logger: toolLogger(stderr)})
	if err != nil {
		unlock()
		return nil, nil, err
	}
	return &offlineDB{DB: d, unlock: unlock}, pos, nil
}

// dbArgs parses flags, checks that the positional argument count is one of
// nargs and that the first names a directory.
func dbArgs(args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) ([]string, error) {
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, err
	}
	return pos, checkDBArgs(pos, nargs...)
}

// checkDBArgs checks that pos holds one of nargs arguments and that the
// first names a directory of ours: a RocksDB database is refused, saying
// which commands read it (before its LOCK file is touched).
func checkDBArgs(pos []string, nargs ...int) error {
	if err := checkArgCount(pos, "", "argument(s)", nargs...); err != nil {
		return err
	}
	if st, err := os.Stat(pos[0]); err != nil || !st.IsDir() {
		return errors.Newf("%s: no such database directory", pos[0])
	}
	return refuseRocksDB(pos[0])
}

func parseID(what, s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, usageErrorf("%s %q is not an integer", what, s)
	}
	return v, nil
}

func encodeKey(ledger, entry int64) []byte {
	k := entrylocation.EncodeKey(ledger, entry)
	return k[:]
}

// formatLocation prints a location as BookKeeper's shell does.
func formatLocation(v []byte) string {
	loc, err := entrylocation.DecodeLocation(v)
	if err != nil {
		return hex.EncodeToString(v)
	}
	return fmt.Sprintf("%d (log: %d, pos: %d)", uint64(loc), entrylog.LocationLogID(loc), entrylog.LocationOffset(loc))
}

// dbSource is a database the read subcommands (props, get, floor, scan)
// read: ours (lsm, opened read-only under its lock), or a RocksDB one
// (BookKeeper's, with --rocksdb DIR; db_rocksdb.go), so that each command
// is written once and prints both in one format, to be compared line by
// line.
type dbSource interface {
	// get returns the value of key, or an error matching errKeyNotFound.
	get(key []byte) ([]byte, error)
	// last returns the last entry in [lower, upper), nil if there is none.
	last(lower, upper []byte) (key, value []byte, err error)
	// scan calls f with the entries in [lower, upper) in key order (a nil
	// bound is open) until f returns false.
	scan(lower, upper []byte, f func(key, value []byte) bool) error
	// printProps writes props' output for the database in dir.
	printProps(w io.Writer, dir string, asJSON, asHex bool) error
	Close() error
}

// errKeyNotFound is a dbSource's get of a missing key.
var errKeyNotFound = errors.New("not found")

// openDBSource parses flags (adding --rocksdb DIR), checks the positional
// argument count and opens the database: DIR, the first positional
// argument, or --rocksdb DIR. nargs counts the arguments after the
// database. It returns the database's directory and the arguments after it.
func openDBSource(args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) (dbSource, string, []string, error) {
	rocksDir := fs.String("rocksdb", "", "read this RocksDB database directory (BookKeeper's) in place of DIR, read-only")
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, "", nil, err
	}
	if *rocksDir != "" {
		db, pos, err := openRocksDBArg(*rocksDir, pos, stderr, nargs...)
		return db, *rocksDir, pos, err
	}
	withDir := make([]int, len(nargs))
	for i, n := range nargs {
		withDir[i] = n + 1
	}
	d, pos, err := openDBPositional(pos, stderr, withDir...)
	if err != nil {
		return nil, "", nil, err
	}
	return ourDB{d}, pos[0], pos[1:], nil
}

// checkArgCount checks that pos holds one of nargs arguments; the usage
// error says "<prefix>takes <nargs> <what>, not <len(pos)>".
func checkArgCount(pos []string, prefix, what string, nargs ...int) error {
	if slices.Contains(nargs, len(pos)) {
		return nil
	}
	want := fmt.Sprint(nargs[0])
	if len(nargs) > 1 {
		want = fmt.Sprintf("%d or %d", nargs[1], nargs[0])
	}
	return usageErrorf("%stakes %s %s, not %d", prefix, want, what, len(pos))
}

func dbGet(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db get", flag.ContinueOnError)
	d, _, pos, err := openDBSource(args, stderr, fs, 2, 1)
	if err != nil {
		return err
	}
	defer d.Close()
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
	v, err := d.get(key)
	if errors.Is(err, errKeyNotFound) {
		return errors.Newf("%s: not found", describeKey(key))
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, formatLocation(v))
	return nil
}

func dbFloor(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db floor", flag.ContinueOnError)
	d, _, pos, err := openDBSource(args, stderr, fs, 1)
	if err != nil {
		return err
	}
	defer d.Close()
	ledger, err := parseID("LEDGER", pos[0])
	if err != nil {
		return err
	}
	if ledger < 0 {
		return usageErrorf("LEDGER %d is negative (ledger ids are 0 to %d)", ledger, int64(math.MaxInt64))
	}
	// Entries 0 to MaxInt64, both included.
	lower, upper := entrylocation.LedgerEntryRange(ledger)
	key, value, err := d.last(lower[:], upper[:])
	if err != nil {
		return err
	}
	if key == nil {
		return errors.Newf("ledger %d has no entries", ledger)
	}
	_, entry, err := entrylocation.DecodeKey(key)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d %s\n", entry, formatLocation(value))
	return nil
}

// parseBound parses L, L:E or a hex key into a key.
func parseBound(flagName, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	if k, ok := parseHexKey(s); ok {
		return k, nil
	}
	parts := strings.SplitN(s, ":", 2)
	l, err := parseID("--"+flagName+" ledger", parts[0])
	if err != nil {
		return nil, err
	}
	var e int64
	if len(parts) == 2 {
		if e, err = parseID("--"+flagName+" entry", parts[1]); err != nil {
			return nil, err
		}
	}
	return encodeKey(l, e), nil
}

func dbScan(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db scan", flag.ContinueOnError)
	from := fs.String("from", "", "first key, LEDGER or LEDGER:ENTRY (inclusive)")
	to := fs.String("to", "", "end key, LEDGER or LEDGER:ENTRY (exclusive)")
	asHex := fs.Bool("hex", false, "print keys and values in hex")
	limit := fs.Int("limit", 0, "stop after this many entries (0: all)")
	d, _, _, err := openDBSource(args, stderr, fs, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	lower, err := parseBound("from", *from)
	if err != nil {
		return err
	}
	upper, err := parseBound("to", *to)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	err = d.scan(lower, upper, func(key, value []byte) bool {
		if *limit > 0 && n >= *limit {
			return false
		}
		if *asHex {
			fmt.Fprintf(w, "%s %s\n", hex.EncodeToString(key), hex.EncodeToString(value))
		} else {
			fmt.Fprintf(w, "%s %s\n", formatKey(key), formatValue(value))
		}
		n++
		return true
	})
	if err != nil {
		return err
	}
	return w.Flush()
}

func dbProps(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db props", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	asHex := fs.Bool("hex", false, "print the tables' key ranges in hex")
	d, dir, _, err := openDBSource(args, stderr, fs, 0)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.printProps(stdout, dir, *asJSON, *asHex)
}

// ourDB is a dbSource on our engine.
type ourDB struct{ *offlineDB }

func (d ourDB) get(key []byte) ([]byte, error) {
	v, err := d.Get(key)
	if errors.Is(err, lsm.ErrNotFound) {
		return nil, errKeyNotFound
	}
	return v, err
}

func (d ourDB) last(lower, upper []byte) ([]byte, []byte, error) {
	it, err := d.NewIter(&lsm.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	if !it.Last() {
		return nil, nil, it.Error()
	}
	return slices.Clone(it.Key()), slices.Clone(it.Value()), nil
}

func (d ourDB) scan(lower, upper []byte, f func(key, value []byte) bool) error {
	it, err := d.NewIter(&lsm.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok && f(it.Key(), it.Value()); ok = it.Next() {
	}
	return it.Close()
}

func dbCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db check", flag.ContinueOnError)
	d, pos, err := openDBArg(args, stderr, fs, 1)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Check(); err != nil {
		return err
	}
	tables, err := d.Tables()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: OK (manifest, WALs and %d tables verified; no orphan tables, nothing in lost/)\n", pos[0], len(tables))
	return nil
}

type dbLevelJSON struct {
	Level          int    `json:"level"`
	Tables         int    `json:"tables"`
	Bytes          uint64 `json:"bytes"`
	Entries        uint64 `json:"entries"`
	RangeDeletions uint64 `json:"range_deletions"`
}

type dbPropsJSON struct {
	Dir                 string        `json:"dir"`
	Levels              []dbLevelJSON `json:"levels"`
	Tables              int           `json:"tables"`
	TableBytes          uint64        `json:"table_bytes"`
	Entries             uint64        `json:"entries"`
	RangeDeletions      uint64        `json:"range_deletions"`
	BytesByTier         tierJSON      `json:"bytes_by_tier"`
	MaxFilterBlockBytes uint64        `json:"max_filter_block_bytes"`
	LastSeqNum          uint64        `json:"last_seqnum"`
}

func (d ourDB) printProps(stdout io.Writer, dir string, asJSON, asHex bool) error {
	tables, err := d.Tables()
	if err != nil {
		return err
	}
	m := d.Metrics()
	p := dbPropsJSON{Dir: dir, LastSeqNum: m.LastSeqNum}
	for level, lm := range m.Levels {
		p.Levels = append(p.Levels, dbLevelJSON{Level: level, Tables: lm.Tables, Bytes: lm.Bytes, Entries: lm.Entries, RangeDeletions: lm.RangeDeletions})
		p.Tables += lm.Tables
		p.TableBytes += lm.Bytes
		p.Entries += lm.Entries
		p.RangeDeletions += lm.RangeDeletions
	}
	for _, t := range tables {
		if tp := t.Properties; tp != nil {
			p.BytesByTier.Data += tp.DataBytes
			p.BytesByTier.Index += tp.IndexBytes
			p.BytesByTier.TopIndex += tp.TopIndexBytes
			p.BytesByTier.Filter += tp.FilterBytes
			p.BytesByTier.TopFilter += tp.TopFilterBytes
			p.MaxFilterBlockBytes = max(p.MaxFilterBlockBytes, tp.MaxFilterBlockSize)
		}
	}
	if asJSON {
		b, err := json.Marshal(p)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%s: %d tables, %d bytes, %d entries, %d range deletions, last seqnum %d\n", p.Dir, p.Tables, p.TableBytes, p.Entries, p.RangeDeletions, p.LastSeqNum)
	fmt.Fprintf(w, "bytes by tier: data %d, index %d, top index %d, filter %d, top filter %d; largest filter block %d\n",
		p.BytesByTier.Data, p.BytesByTier.Index, p.BytesByTier.TopIndex, p.BytesByTier.Filter, p.BytesByTier.TopFilter, p.MaxFilterBlockBytes)
	fmt.Fprintf(w, "%-6s %7s %14s %12s %10s\n", "level", "tables", "bytes", "entries", "rangedels")
	for _, l := range p.Levels {
		fmt.Fprintf(w, "L%-5d %7d %14d %12d %10d\n", l.Level, l.Tables, l.Bytes, l.Entries, l.RangeDeletions)
	}
	for _, t := range tables {
		fmt.Fprintf(w, "  L%d %s %d bytes, %d entries, keys %s .. %s, seqnums %d..%d\n", t.Level, t.Path, t.Size, t.Entries,
			formatKeyIn(t.Smallest, asHex), formatKeyIn(t.Largest, asHex), t.SmallestSeqNum, t.LargestSeqNum)
	}
	return w.Flush()
}
