package main

import (
	"bufio"
	"encoding/binary"
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

	"github.com/bookie-index/bookie-index/entrylocation"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/cockroachdb/errors"
)

// dbCommands are the subcommands of db. Every one but checkpoint reads a
// database directory no process has open, read-only.
func dbCommands() []subcommand {
	return []subcommand{
		{"props", "DIR [--json] [--hex]", "levels, tables, bytes, entries; each table's key range", withRocksDB(dbProps, rocksProps)},
		{"get", "DIR LEDGER ENTRY | DIR KEY", "the location of one entry; KEY is LEDGER:ENTRY or the key in hex (32 digits)", withRocksDB(dbGet, rocksGet)},
		{"floor", "DIR LEDGER", "the last entry of a ledger and its location", withRocksDB(dbFloor, rocksFloor)},
		{"scan", "DIR [--from KEY] [--to KEY] [--hex] [--limit N]", "the entries from --from (inclusive) to --to (exclusive); KEY is LEDGER, LEDGER:ENTRY or hex", withRocksDB(dbScan, rocksScan)},
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
func openDBArg(name string, args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) (*offlineDB, []string, error) {
	pos, err := dbArgs(name, args, stderr, fs, nargs...)
	if err != nil {
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
func dbArgs(name string, args []string, stderr io.Writer, fs *flag.FlagSet, nargs ...int) ([]string, error) {
	pos, err := parseFlags(fs, args, stderr)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(nargs, len(pos)) {
		want := fmt.Sprint(nargs[0])
		if len(nargs) > 1 {
			want = fmt.Sprintf("%d or %d", nargs[1], nargs[0])
		}
		return nil, usageErrorf("takes %s argument(s), not %d", want, len(pos))
	}
	if st, err := os.Stat(pos[0]); err != nil || !st.IsDir() {
		return nil, errors.Newf("%s: no such database directory", pos[0])
	}
	return pos, nil
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
	if len(v) != 8 {
		return hex.EncodeToString(v)
	}
	loc := binary.BigEndian.Uint64(v)
	return fmt.Sprintf("%d (log: %d, pos: %d)", loc, loc>>32, loc&0xffffffff)
}

func dbGet(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db get", flag.ContinueOnError)
	d, pos, err := openDBArg("get", args, stderr, fs, 3, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	var key []byte
	if len(pos) == 2 {
		if key, err = parseKey("KEY", pos[1]); err != nil {
			return err
		}
	} else {
		ledger, err := parseID("LEDGER", pos[1])
		if err != nil {
			return err
		}
		entry, err := parseID("ENTRY", pos[2])
		if err != nil {
			return err
		}
		key = encodeKey(ledger, entry)
	}
	v, err := d.Get(key)
	if errors.Is(err, lsm.ErrNotFound) {
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
	d, pos, err := openDBArg("floor", args, stderr, fs, 2)
	if err != nil {
		return err
	}
	defer d.Close()
	ledger, err := parseID("LEDGER", pos[1])
	if err != nil {
		return err
	}
	if ledger < 0 {
		return usageErrorf("LEDGER %d is negative (ledger ids are 0 to %d)", ledger, int64(math.MaxInt64))
	}
	// Entries 0 to MaxInt64, both included.
	lower, upper := entrylocation.LedgerEntryRange(ledger)
	it, err := d.NewIter(&lsm.IterOptions{LowerBound: lower[:], UpperBound: upper[:]})
	if err != nil {
		return err
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return err
		}
		return errors.Newf("ledger %d has no entries", ledger)
	}
	fmt.Fprintf(stdout, "%d %s\n", int64(binary.BigEndian.Uint64(it.Key()[8:])), formatLocation(it.Value()))
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
	d, _, err := openDBArg("scan", args, stderr, fs, 1)
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
	it, err := d.NewIter(&lsm.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	n := 0
	for ok := it.First(); ok && (*limit <= 0 || n < *limit); ok = it.Next() {
		if *asHex {
			fmt.Fprintf(w, "%s %s\n", hex.EncodeToString(it.Key()), hex.EncodeToString(it.Value()))
		} else {
			fmt.Fprintf(w, "%s %s\n", formatKey(it.Key()), formatValue(it.Value()))
		}
		n++
	}
	if err := it.Close(); err != nil {
		return err
	}
	return w.Flush()
}

func dbCheck(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db check", flag.ContinueOnError)
	d, pos, err := openDBArg("check", args, stderr, fs, 1)
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

func dbProps(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("db props", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	asHex := fs.Bool("hex", false, "print the tables' key ranges in hex")
	d, pos, err := openDBArg("props", args, stderr, fs, 1)
	if err != nil {
		return err
	}
	defer d.Close()
	tables, err := d.Tables()
	if err != nil {
		return err
	}
	m := d.Metrics()
	p := dbPropsJSON{Dir: pos[0], LastSeqNum: m.LastSeqNum}
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
	if *asJSON {
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
			formatKeyIn(t.Smallest, *asHex), formatKeyIn(t.Largest, *asHex), t.SmallestSeqNum, t.LargestSeqNum)
	}
	return w.Flush()
}
