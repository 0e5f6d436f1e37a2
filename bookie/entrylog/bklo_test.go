package entrylog

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// bkLog builds a BookKeeper DefaultEntryLogger log byte for byte as
// upstream writes it (docs/format.md): a 1 KiB header "BKLO", version;
// records [i32 size][entry] where the entry starts with its ledger and
// entry ids; at rotation, the ledgers map in batches and the header's
// map offset and ledgers count.
type bkLog struct {
	id    int64
	b     []byte
	usage map[int64]int64 // bytes per ledger, size fields included
	order []int64         // ledgers in first-write order
}

func newBKLog(id int64, version uint32) *bkLog {
	b := make([]byte, HeaderSize)
	copy(b, "BKLO")
	binary.BigEndian.PutUint32(b[4:], version)
	return &bkLog{id: id, b: b, usage: map[int64]int64{}}
}

// add appends an entry: its 16-byte header and payload. It returns the
// location upstream's addEntry returns: the position after the size.
func (l *bkLog) add(ledgerID, entryID int64, payload []byte) int64 {
	entry := binary.BigEndian.AppendUint64(nil, uint64(ledgerID))
	entry = binary.BigEndian.AppendUint64(entry, uint64(entryID))
	entry = append(entry, payload...)
	l.b = binary.BigEndian.AppendUint32(l.b, uint32(len(entry)))
	pos := int64(len(l.b))
	l.b = append(l.b, entry...)
	if _, ok := l.usage[ledgerID]; !ok {
		l.order = append(l.order, ledgerID)
	}
	l.usage[ledgerID] += int64(len(entry)) + 4
	return MakeLocation(l.id, pos)
}

// appendLedgersMap writes the ledgers map as upstream's appendLedgersMap:
// batches of at most BKLedgersMapMaxBatch pairs, each a record of ledger
// -1, entry -2, then the header's map offset and ledgers count.
func (l *bkLog) appendLedgersMap() {
	offset := int64(len(l.b))
	for rest := l.order; len(rest) > 0; {
		n := min(len(rest), BKLedgersMapMaxBatch)
		l.b = binary.BigEndian.AppendUint32(l.b, uint32(bkLedgersMapBatchHeader+bkLedgersMapPairSize*n))
		mapLedger, mapEntry := int64(bkLedgersMapLedgerID), int64(bkLedgersMapEntryID)
		l.b = binary.BigEndian.AppendUint64(l.b, uint64(mapLedger))
		l.b = binary.BigEndian.AppendUint64(l.b, uint64(mapEntry))
		l.b = binary.BigEndian.AppendUint32(l.b, uint32(n))
		for _, id := range rest[:n] {
			l.b = binary.BigEndian.AppendUint64(l.b, uint64(id))
			l.b = binary.BigEndian.AppendUint64(l.b, uint64(l.usage[id]))
		}
		rest = rest[n:]
	}
	binary.BigEndian.PutUint64(l.b[8:], uint64(offset))
	binary.BigEndian.PutUint32(l.b[16:], uint32(len(l.order)))
}

func writeFile(t testing.TB, fs vfs.FS, path string, data []byte) {
	require.NoError(t, fs.MkdirAll(filepath.Dir(path), 0o755))
	f, err := fs.Create(path)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

func bkPayload(ledger, entry int64) []byte {
	return fmt.Appendf(nil, "bk ledger %d entry %d %s", ledger, entry, strings.Repeat("#", int(entry%5)))
}

type bkEntry struct{ ledger, entry, location int64 }

// writeBKDir writes a rotated log 0 with a ledgers map, a current log 1
// without (a torn record at its end when torn), and lastId, as a
// BookKeeper bookie leaves them.
func writeBKDir(t testing.TB, fs vfs.FS, dir string, torn bool) []bkEntry {
	var entries []bkEntry
	l0 := newBKLog(0, bkHeaderV1)
	for e := int64(0); e < 4; e++ {
		for _, ledger := range []int64{5, 2} {
			entries = append(entries, bkEntry{ledger, e, l0.add(ledger, e, bkPayload(ledger, e))})
		}
	}
	l0.appendLedgersMap()
	l1 := newBKLog(1, bkHeaderV1)
	for e := int64(4); e < 7; e++ {
		entries = append(entries, bkEntry{5, e, l1.add(5, e, bkPayload(5, e))})
	}
	entries = append(entries, bkEntry{9, 0, l1.add(9, 0, nil)}) // nothing after the ids
	if torn {
		l1.add(5, 7, []byte("torn"))
		l1.b = l1.b[:len(l1.b)-3]
	}
	writeFile(t, fs, filepath.Join(dir, LogFileName(0)), l0.b)
	writeFile(t, fs, filepath.Join(dir, LogFileName(1)), l1.b)
	writeFile(t, fs, filepath.Join(dir, LastIDFileName), []byte("1\n"))
	return entries
}

// TestBKLOReadScan reads BookKeeper logs through every path: ReadEntry,
// ReadAfter, Scan, the ledgers map; then writes new entries, which go to
// a BIEL log numbered after BookKeeper's, and reads both side by side.
func TestBKLOReadScan(t *testing.T) {
	fs := vfs.NewMem()
	entries := writeBKDir(t, fs, "d", true)

	l, err := Open("d", &Options{FS: fs})
	require.NoError(t, err)
	defer l.Close()
	for _, e := range entries {
		p, err := l.ReadEntry(e.ledger, e.entry, e.location)
		require.NoError(t, err, "entry %d of ledger %d", e.entry, e.ledger)
		require.Equal(t, bkPayload(e.ledger, e.entry)[:len(p)], p)
		if e.ledger != 9 {
			require.Equal(t, bkPayload(e.ledger, e.entry), p)
		} else {
			require.Empty(t, p)
		}
	}
	// Wrong ids, a location inside a record, past the end.
	_, err = l.ReadEntry(5, 1, entries[0].location)
	require.ErrorIs(t, err, ErrBadLocation)
	_, err = l.ReadEntry(5, 0, entries[0].location+3)
	require.ErrorIs(t, err, ErrBadLocation)
	_, err = l.ReadEntry(5, 0, MakeLocation(1, 1<<20))
	require.ErrorIs(t, err, ErrBadLocation)

	// ReadAfter the first record of log 0: the rest of log 0, never the
	// ledgers map.
	var after []bkEntry
	require.NoError(t, l.ReadAfter(entries[0].location, func(rec *Record) bool {
		require.Equal(t, bkPayload(rec.LedgerID, rec.EntryID), rec.Payload)
		after = append(after, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
		return true
	}))
	require.Equal(t, entries[1:8], after)

	// Scan: every entry; the torn record of log 1 is its tail.
	var scanned []bkEntry
	for id := int64(0); id < 2; id++ {
		res, err := Scan(fs, l.LogPath(id), func(rec *Record) error {
			scanned = append(scanned, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, FormatBKLO, res.Format)
		require.Equal(t, id, res.LogID)
		if id == 1 {
			require.ErrorIs(t, res.Tail, ErrCorruption)
			require.Less(t, res.ValidEnd, res.Size)
		} else {
			require.NoError(t, res.Tail)
			require.Equal(t, res.Size, res.ValidEnd)
		}
	}
	require.Equal(t, entries, scanned)

	// The ledgers map of the rotated log; none in the current one.
	m, err := ReadBKLedgersMap(fs, l.LogPath(0))
	require.NoError(t, err)
	require.Equal(t, []BKLedgerSize{{5, 4*(4+16) + int64(len(bkPayload(5, 0))+len(bkPayload(5, 1))+len(bkPayload(5, 2))+len(bkPayload(5, 3)))},
		{2, 4*(4+16) + int64(len(bkPayload(2, 0))+len(bkPayload(2, 1))+len(bkPayload(2, 2))+len(bkPayload(2, 3)))}}, m)
	_, err = ReadBKLedgersMap(fs, l.LogPath(1))
	require.ErrorIs(t, err, ErrNoLedgersMap)

	// New entries: a BIEL log above lastId, read beside BookKeeper's.
	loc, err := l.AddEntry(5, 7, []byte("ours"))
	require.NoError(t, err)
	require.Equal(t, int64(2), LocationLogID(loc))
	require.NoError(t, l.Flush())
	p, err := l.ReadEntry(5, 7, loc)
	require.NoError(t, err)
	require.Equal(t, []byte("ours"), p)
	f, err := DetectFormat(fs, l.LogPath(2))
	require.NoError(t, err)
	require.Equal(t, FormatBIEL, f)
	res, err := Scan(fs, l.LogPath(2), func(rec *Record) error {
		require.Equal(t, int64(RecordOverhead+len("ours")), rec.Size)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, FormatBIEL, res.Format)
	require.Equal(t, int64(1), res.Records)
	p, err = l.ReadEntry(entries[3].ledger, entries[3].entry, entries[3].location)
	require.NoError(t, err)
	require.Equal(t, bkPayload(entries[3].ledger, entries[3].entry), p)
}

// TestBKLONextIDFromLastID: BookKeeper's lastId can be above every log
// left (its GC removed the newest ones, or a compaction log took an id):
// new logs go above it.
func TestBKLONextIDFromLastID(t *testing.T) {
	fs := vfs.NewMem()
	writeBKDir(t, fs, "d", false)
	writeFile(t, fs, "d/"+LastIDFileName, []byte("1f\n"))
	l, err := Open("d", &Options{FS: fs})
	require.NoError(t, err)
	defer l.Close()
	loc, err := l.AddEntry(1, 0, nil)
	require.NoError(t, err)
	require.Equal(t, int64(0x20), LocationLogID(loc))
}

// TestBKLOEmptyNextLog: BookKeeper creates its next log ahead of time and
// writes the header only when the log becomes current, so a stopped
// bookie leaves its newest log file empty. It scans as a log of no
// records; the logger reads the other logs and writes after it.
func TestBKLOEmptyNextLog(t *testing.T) {
	fs := vfs.NewMem()
	entries := writeBKDir(t, fs, "d", false)
	writeFile(t, fs, "d/5.log", nil)
	res, err := Scan(fs, "d/5.log", func(*Record) error { return errors.New("no record expected") })
	require.NoError(t, err)
	require.Equal(t, ScanResult{LogID: 5}, res)

	l, err := Open("d", &Options{FS: fs})
	require.NoError(t, err)
	defer l.Close()
	p, err := l.ReadEntry(entries[0].ledger, entries[0].entry, entries[0].location)
	require.NoError(t, err)
	require.Equal(t, bkPayload(entries[0].ledger, entries[0].entry), p)
	loc, err := l.AddEntry(1, 0, nil)
	require.NoError(t, err)
	require.Equal(t, int64(6), LocationLogID(loc))
}

// TestBKLOLedgersMapBatches: more than BKLedgersMapMaxBatch ledgers make
// two batches; every pair is read, the count checked against the header.
func TestBKLOLedgersMapBatches(t *testing.T) {
	fs := vfs.NewMem()
	l := newBKLog(3, bkHeaderV1)
	n := BKLedgersMapMaxBatch + 7
	for i := 0; i < n; i++ {
		l.add(int64(i), 0, nil)
	}
	l.add(0, 1, []byte("x"))
	l.appendLedgersMap()
	writeFile(t, fs, "d/3.log", l.b)
	m, err := ReadBKLedgersMap(fs, "d/3.log")
	require.NoError(t, err)
	require.Len(t, m, n)
	require.Equal(t, BKLedgerSize{0, 2*(4+16) + 1}, m[0])
	require.Equal(t, BKLedgerSize{int64(n - 1), 4 + 16}, m[n-1])
	var count int
	res, err := Scan(fs, "d/3.log", func(*Record) error { count++; return nil })
	require.NoError(t, err)
	require.NoError(t, res.Tail)
	require.Equal(t, n+1, count)

	// A header that counts one ledger more: corruption, not a short map.
	b := slices.Clone(l.b)
	binary.BigEndian.PutUint32(b[16:], uint32(n+1))
	writeFile(t, fs, "d/4.log", b)
	_, err = ReadBKLedgersMap(fs, "d/4.log")
	require.ErrorIs(t, err, ErrCorruption)
	require.Contains(t, err.Error(), "d/4.log")
}

// TestBKLODamage: damaged BookKeeper records are named errors, never
// panics or wrong payloads.
func TestBKLODamage(t *testing.T) {
	fs := vfs.NewMem()
	l := newBKLog(0, bkHeaderV0)
	loc := l.add(1, 0, []byte("payload"))
	good := l.b
	for _, c := range []struct {
		name   string
		mutate func(b []byte)
		want   error
	}{
		{"size below the ids", func(b []byte) { binary.BigEndian.PutUint32(b[HeaderSize:], 15) }, ErrCorruption},
		{"size past the end", func(b []byte) { binary.BigEndian.PutUint32(b[HeaderSize:], 1000) }, ErrCorruption},
		{"negative size", func(b []byte) { binary.BigEndian.PutUint32(b[HeaderSize:], 0xffffffff) }, ErrCorruption},
		{"other ledger", func(b []byte) { b[HeaderSize+4+7] = 2 }, ErrBadLocation},
		{"header version 2", func(b []byte) { b[7] = 2 }, ErrCorruption},
		{"bad magic", func(b []byte) { b[0] = 'X' }, ErrCorruption},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := "d-" + strings.ReplaceAll(c.name, " ", "-")
			b := slices.Clone(good)
			c.mutate(b)
			writeFile(t, fs, filepath.Join(dir, "0.log"), b)
			lg, err := Open(dir, &Options{FS: fs})
			require.NoError(t, err)
			defer lg.Close()
			_, err = lg.ReadEntry(1, 0, loc)
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), "log 0x0")
			res, err := Scan(fs, filepath.Join(dir, "0.log"), func(*Record) error { return nil })
			if err == nil {
				if c.want == ErrCorruption {
					require.ErrorIs(t, res.Tail, ErrCorruption)
				}
			} else {
				require.ErrorIs(t, err, ErrCorruption)
			}
		})
	}
}

// The committed BookKeeper logs and their listing.
const bkloDir = "testdata/bklo"

// TestBKLOGolden reads the committed BookKeeper logs testdata/bklo (made
// by writeBKDir; -regenerate rewrites them) and compares a byte dump, the
// scan, the ledgers map and reads with testdata/bklo_listing.
//
//	dump <log> | scan | ledgers-map | read
func TestBKLOGolden(t *testing.T) {
	if golden.Regenerating() {
		require.NoError(t, os.RemoveAll(bkloDir))
		writeBKDir(t, vfs.Default, bkloDir, true)
	}
	dir := t.TempDir()
	names, err := os.ReadDir(bkloDir)
	require.NoError(t, err)
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(bkloDir, n.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, n.Name()), data, 0o644))
	}
	golden.Run(t, "testdata/bklo_listing", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "dump":
			data, err := os.ReadFile(filepath.Join(bkloDir, c.String(t, "log", "")))
			require.NoError(t, err)
			return dumpBKLog(data)
		case "scan", "ledgers-map":
			var lines []string
			for _, n := range names {
				if _, ok := ParseLogFileName(n.Name()); !ok {
					continue
				}
				path := filepath.Join(bkloDir, n.Name())
				if c.Cmd == "ledgers-map" {
					m, err := ReadBKLedgersMap(nil, path)
					lines = append(lines, fmt.Sprintf("%s: %v, err %v", n.Name(), m, errors.Is(err, ErrNoLedgersMap)))
					continue
				}
				res, err := Scan(nil, path, func(rec *Record) error {
					lines = append(lines, fmt.Sprintf("  ledger %d entry %d at %s: %s", rec.LedgerID, rec.EntryID, FormatLocation(rec.Location), golden.Short(rec.Payload)))
					return nil
				})
				require.NoError(t, err)
				lines = append(lines, fmt.Sprintf("%s: %s, log id %d, %d records, size %d, valid end %d, tail %v", n.Name(), res.Format, res.LogID, res.Records, res.Size, res.ValidEnd, res.Tail != nil))
			}
			return strings.Join(lines, "\n")
		case "read":
			l, err := Open(dir, nil)
			require.NoError(t, err)
			defer l.Close()
			var lines []string
			for _, loc := range c.Lines() {
				var ledger, entry, location int64
				_, err := fmt.Sscanf(loc, "%d %d %v", &ledger, &entry, &location)
				require.NoError(t, err, "%s: %q", c.Pos, loc)
				p, err := l.ReadEntry(ledger, entry, location)
				switch {
				case errors.Is(err, ErrBadLocation):
					lines = append(lines, fmt.Sprintf("ReadEntry(%s): bad location", loc))
				case err != nil:
					lines = append(lines, fmt.Sprintf("ReadEntry(%s): %v", loc, err))
				default:
					lines = append(lines, fmt.Sprintf("ReadEntry(%s): %s", loc, golden.Short(p)))
				}
			}
			return strings.Join(lines, "\n")
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

// dumpBKLog dumps a BookKeeper log as docs/format.md gives it.
func dumpBKLog(data []byte) string {
	d := golden.NewDump(data)
	d.Bytes(4, "magic %q", d.Peek(4))
	d.Uint(4, binary.BigEndian, "header version")
	d.Uint(8, binary.BigEndian, "ledgers map offset")
	d.Uint(4, binary.BigEndian, "ledgers count")
	d.Bytes(goldenHeaderSize-20, "zeros to offset %d", goldenHeaderSize)
	for d.Remaining() >= 20 {
		size := d.Uint(4, binary.BigEndian, "size (bytes after this field)")
		d.Note("location offset %d", d.Offset())
		ledger := int64(d.Uint(8, binary.BigEndian, "ledger id"))
		d.Uint(8, binary.BigEndian, "entry id")
		if ledger == bkLedgersMapLedgerID {
			n := d.Uint(4, binary.BigEndian, "ledgers in this batch")
			for i := uint64(0); i < n; i++ {
				d.Uint(8, binary.BigEndian, "ledger id")
				d.Uint(8, binary.BigEndian, "bytes")
			}
			continue
		}
		d.Bytes(min(int(size)-16, d.Remaining()), "payload")
	}
	if d.Remaining() > 0 {
		d.Bytes(d.Remaining(), "torn record")
	}
	return d.String()
}

// FuzzScanBKLO feeds arbitrary bytes behind a BookKeeper header to Scan,
// ReadBKLedgersMap and ReadEntry: errors or a tail, never a panic; every
// record scanned reads back by its location.
func FuzzScanBKLO(f *testing.F) {
	fs := vfs.NewMem()
	writeBKDir(f, fs, "seed", true)
	for _, name := range []string{"0.log", "1.log"} {
		r, err := fs.Open("seed/" + name)
		require.NoError(f, err)
		data, err := io.ReadAll(io.NewSectionReader(r, 0, 1<<20))
		require.NoError(f, err)
		_ = r.Close()
		f.Add(data)
	}
	_, direct, _ := writeBKDirectLog(f, fs, "direct")
	f.Add(direct)
	f.Fuzz(func(t *testing.T, data []byte) {
		fs := vfs.NewMem()
		writeFile(t, fs, "d/0.log", data)
		_, _ = ReadBKLedgersMap(fs, "d/0.log")
		var recs []Record
		_, err := Scan(fs, "d/0.log", func(rec *Record) error {
			c := *rec
			c.Payload = slices.Clone(rec.Payload)
			recs = append(recs, c)
			return nil
		})
		if err != nil {
			return
		}
		l, err := Open("d", &Options{FS: fs})
		require.NoError(t, err)
		defer l.Close()
		for _, rec := range recs {
			p, err := l.ReadEntry(rec.LedgerID, rec.EntryID, rec.Location)
			require.NoError(t, err)
			// An empty payload may come back nil or empty: compare bytes.
			require.True(t, bytes.Equal(rec.Payload, p), "entry %d:%d: scanned %x, read %x", rec.LedgerID, rec.EntryID, rec.Payload, p)
			// ReadAfter runs into what Scan reported as the tail.
			if err := l.ReadAfter(rec.Location, func(*Record) bool { return true }); err != nil {
				require.ErrorIs(t, err, ErrCorruption)
			}
		}
	})
}

// TestBKLORandom checks BookKeeper logs of random shapes (entry sizes,
// ledgers, with or without a ledgers map, a torn tail on the last log)
// against the model the generator keeps: every entry reads back by its
// location, Scan yields exactly the model's entries, ReadAfter the rest of
// a log from any entry, the ledgers map the model's usage; then entries of
// ours are added and both formats read side by side.
func TestBKLORandom(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for round := 0; round < 20; round++ {
		fs := vfs.NewMem()
		nlogs := 1 + rng.Intn(4)
		type modelEntry struct {
			bkEntry
			payload []byte
		}
		var model [][]modelEntry
		var maps []map[int64]int64
		torn := map[int]bool{}
		next := map[int64]int64{}
		for id := 0; id < nlogs; id++ {
			l := newBKLog(int64(id), bkHeaderV1)
			var ents []modelEntry
			for n := rng.Intn(40); n > 0; n-- {
				ledger := int64(rng.Intn(5))
				payload := make([]byte, rng.Intn(300))
				rng.Read(payload)
				loc := l.add(ledger, next[ledger], payload)
				ents = append(ents, modelEntry{bkEntry{ledger, next[ledger], loc}, payload})
				next[ledger]++
			}
			last := id == nlogs-1
			if !last || rng.Intn(3) == 0 {
				l.appendLedgersMap()
				maps = append(maps, l.usage)
			} else {
				maps = append(maps, nil)
				if rng.Intn(2) == 0 {
					torn[id] = true
					l.add(1, 1<<40, make([]byte, 50))
					l.b = l.b[:len(l.b)-1-rng.Intn(60)]
				}
			}
			writeFile(t, fs, filepath.Join("d", LogFileName(int64(id))), l.b)
			model = append(model, ents)
		}
		lg, err := Open("d", &Options{FS: fs})
		require.NoError(t, err)
		for id, ents := range model {
			var scanned []modelEntry
			usage := map[int64]int64{}
			res, err := Scan(fs, lg.LogPath(int64(id)), func(rec *Record) error {
				scanned = append(scanned, modelEntry{bkEntry{rec.LedgerID, rec.EntryID, rec.Location}, slices.Clone(rec.Payload)})
				usage[rec.LedgerID] += rec.Size
				return nil
			})
			require.NoError(t, err)
			if torn[id] {
				require.ErrorIs(t, res.Tail, ErrCorruption)
			} else {
				require.NoError(t, res.Tail, "seed %d round %d log %d", seed, round, id)
				require.Equal(t, res.Size, res.ValidEnd)
			}
			require.Equal(t, len(ents), len(scanned), "seed %d round %d log %d", seed, round, id)
			for i, e := range ents {
				require.Equal(t, e.bkEntry, scanned[i].bkEntry)
				require.True(t, bytesEqual(e.payload, scanned[i].payload))
				p, err := lg.ReadEntry(e.ledger, e.entry, e.location)
				require.NoError(t, err)
				require.True(t, bytesEqual(e.payload, p), "seed %d round %d log %d entry %d", seed, round, id, i)
			}
			if len(ents) > 0 {
				i := rng.Intn(len(ents))
				var after []bkEntry
				err := lg.ReadAfter(ents[i].location, func(rec *Record) bool {
					after = append(after, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
					return true
				})
				if err != nil {
					require.True(t, torn[id], "only a torn tail stops it: %v", err)
					require.ErrorIs(t, err, ErrCorruption)
				}
				var want []bkEntry
				for _, e := range ents[i+1:] {
					want = append(want, e.bkEntry)
				}
				require.Equal(t, want, after, "seed %d round %d log %d from %d", seed, round, id, i)
			}
			if !torn[id] {
				// A scan's sizes add up to the ledgers map's (upstream's
				// accounting), map or no map.
				want := map[int64]int64{}
				for _, e := range ents {
					want[e.ledger] += 4 + BKEntryHeaderSize + int64(len(e.payload))
				}
				require.Equal(t, want, usage)
			}
			m, err := ReadBKLedgersMap(fs, lg.LogPath(int64(id)))
			if len(maps[id]) == 0 {
				require.ErrorIs(t, err, ErrNoLedgersMap)
				continue
			}
			require.NoError(t, err)
			got := map[int64]int64{}
			for _, ls := range m {
				got[ls.LedgerID] = ls.Size
			}
			require.Equal(t, maps[id], got)
		}
		loc, err := lg.AddEntry(9, 0, []byte("ours"))
		require.NoError(t, err)
		require.Equal(t, int64(nlogs), LocationLogID(loc))
		require.NoError(t, lg.Flush())
		p, err := lg.ReadEntry(9, 0, loc)
		require.NoError(t, err)
		require.Equal(t, []byte("ours"), p)
		require.NoError(t, lg.Close())
	}
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// TestBKLOMetadata: the garbage collector's usage of a BookKeeper log
// comes from its ledgers map when it has one, else from a scan counting
// BookKeeper's record sizes (an entry with nothing after its ids takes 20
// bytes, fewer than any record of ours); the side file written for next
// time decodes.
func TestBKLOMetadata(t *testing.T) {
	fs := vfs.NewMem()
	entries := writeBKDir(t, fs, "d", true)
	l, err := Open("d", &Options{FS: fs})
	require.NoError(t, err)
	defer l.Close()

	m, err := l.Metadata(0)
	require.NoError(t, err)
	pairs, err := ReadBKLedgersMap(fs, l.LogPath(0))
	require.NoError(t, err)
	want := map[int64]int64{}
	for _, p := range pairs {
		want[p.LedgerID] = p.Size
	}
	got := map[int64]int64{}
	for _, u := range m.Ledgers {
		got[u.LedgerID] = u.Bytes
	}
	require.Equal(t, want, got)

	m, err = l.Metadata(1)
	require.NoError(t, err)
	want = map[int64]int64{}
	for _, e := range entries {
		if LocationLogID(e.location) == 1 {
			n := int64(len(bkPayload(e.ledger, e.entry)))
			if e.ledger == 9 {
				n = 0
			}
			want[e.ledger] += 4 + BKEntryHeaderSize + n
		}
	}
	got = map[int64]int64{}
	for _, u := range m.Ledgers {
		got[u.LedgerID] = u.Bytes
	}
	require.Equal(t, want, got)
	for id := int64(0); id < 2; id++ {
		back, err := ReadMetadata(fs, filepath.Join("d", MetadataFileName(id)))
		require.NoError(t, err, "log %d", id)
		require.Equal(t, id, back.LogID)
	}
}

// newBKDirectLog starts a log as upstream's DirectEntryLogger writes it:
// the 1 KiB header, then a record of ledger -1 entry 0 filling the rest
// of the first 4 KiB block.
func newBKDirectLog(id int64) *bkLog {
	l := newBKLog(id, bkHeaderV1)
	l.b = binary.BigEndian.AppendUint32(l.b, bkDirectAlignment-HeaderSize-SizeFieldSize)
	l.b = binary.BigEndian.AppendUint64(l.b, ^uint64(0))
	l.b = append(l.b, make([]byte, bkDirectAlignment-len(l.b))...)
	return l
}

// pad is a DirectEntryLogger flush: 0xF0 bytes up to the next 4 KiB
// boundary.
func (l *bkLog) pad() {
	for len(l.b)%bkDirectAlignment != 0 {
		l.b = append(l.b, bkDirectPadding)
	}
}

// writeBKDirectLog writes log 0 of a DirectEntryLogger: entries in three
// flushes (the second ending 2 bytes before a 4 KiB boundary, so that its
// padding is shorter than a size field), the ledgers map, padding, and
// the zeros of a preallocated log.
func writeBKDirectLog(t testing.TB, fs vfs.FS, dir string) ([]bkEntry, []byte, int) {
	l := newBKDirectLog(0)
	var entries []bkEntry
	add := func(ledger, entry int64, payload []byte) {
		entries = append(entries, bkEntry{ledger, entry, l.add(ledger, entry, payload)})
	}
	for e := int64(0); e < 3; e++ {
		add(3, e, bkPayload(3, e))
		add(4, e, bkPayload(4, e))
	}
	l.pad()
	add(3, 3, bkPayload(3, 3))
	// An entry whose record ends 2 bytes before the boundary.
	rest := bkDirectAlignment - len(l.b)%bkDirectAlignment
	add(4, 3, bytes.Repeat([]byte("x"), rest-2-SizeFieldSize-BKEntryHeaderSize))
	l.pad()
	add(3, 4, bkPayload(3, 4))
	add(5, 0, bkPayload(5, 0)[:0])
	l.appendLedgersMap()
	l.pad()
	written := len(l.b)
	data := append(l.b, make([]byte, 3*bkDirectAlignment)...)
	writeFile(t, fs, filepath.Join(dir, LogFileName(0)), data)
	return entries, data, written
}

// TestBKLODirectLogs reads a log of upstream's DirectEntryLogger
// (dbStorage_directIOEntryLoggerEnabled): every entry through Scan,
// ReadAfter and ReadEntry across its padding, its ledgers map, and the end
// at the zeros of its preallocated space; padding that is not 0xF0 up to
// a 4 KiB boundary is corruption, and a DefaultEntryLogger log is read as
// before (no padding there).
func TestBKLODirectLogs(t *testing.T) {
	fs := vfs.NewMem()
	entries, data, written := writeBKDirectLog(t, fs, "d")

	var scanned []bkEntry
	res, err := Scan(fs, "d/0.log", func(rec *Record) error {
		if rec.LedgerID != 4 || rec.EntryID != 3 {
			require.Equal(t, bkPayload(rec.LedgerID, rec.EntryID)[:len(rec.Payload)], rec.Payload)
		}
		scanned = append(scanned, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, res.Tail)
	require.Equal(t, FormatBKLO, res.Format)
	require.Equal(t, entries, scanned)
	require.Equal(t, int64(written), res.ValidEnd, "the scan ends where the preallocated zeros start")

	m, err := ReadBKLedgersMap(fs, "d/0.log")
	require.NoError(t, err)
	require.Len(t, m, 3)

	l, err := Open("d", &Options{FS: fs})
	require.NoError(t, err)
	defer l.Close()
	for _, e := range entries {
		_, err := l.ReadEntry(e.ledger, e.entry, e.location)
		require.NoError(t, err, "entry %d of ledger %d", e.entry, e.ledger)
	}
	var after []bkEntry
	require.NoError(t, l.ReadAfter(entries[0].location, func(rec *Record) bool {
		after = append(after, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
		return true
	}))
	require.Equal(t, entries[1:], after, "read-ahead crosses the padding")

	// A damaged padding byte: the entries before it, then corruption
	// naming it.
	bad := slices.Clone(data)
	first := bytes.IndexByte(bad[bkDirectAlignment:], bkDirectPadding) + bkDirectAlignment
	bad[first+5] = 0
	writeFile(t, fs, "bad/0.log", bad)
	scanned = scanned[:0]
	res, err = Scan(fs, "bad/0.log", func(rec *Record) error {
		scanned = append(scanned, bkEntry{rec.LedgerID, rec.EntryID, rec.Location})
		return nil
	})
	require.NoError(t, err)
	require.ErrorIs(t, res.Tail, ErrCorruption)
	require.ErrorContains(t, res.Tail, fmt.Sprintf("byte 0x0 at offset %d in the padding from offset %d", first+5, first))
	require.Equal(t, entries[:6], scanned)

	// The same records in a DefaultEntryLogger log (no filler block): the
	// 0xF0 bytes are not padding there.
	legacy := newBKLog(0, bkHeaderV1)
	legacy.add(3, 0, bkPayload(3, 0))
	legacy.b = append(legacy.b, bytes.Repeat([]byte{bkDirectPadding}, 100)...)
	writeFile(t, fs, "legacy/0.log", legacy.b)
	res, err = Scan(fs, "legacy/0.log", func(*Record) error { return nil })
	require.NoError(t, err)
	require.ErrorIs(t, res.Tail, ErrCorruption)
	require.Equal(t, int64(1), res.Records)
}
