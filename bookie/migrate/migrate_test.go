package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// rocksFixtures is where lsm/rocksdb keeps the databases real RocksDB
// wrote (never modified: tests copy them).
const rocksFixtures = "../../lsm/rocksdb/testdata"

// copyFixture copies the RocksDB database testdata/<name> to dst on fs.
func copyFixture(t testing.TB, fs vfs.FS, name, dst string) {
	t.Helper()
	src := filepath.Join(rocksFixtures, name)
	entries, err := os.ReadDir(src)
	require.NoError(t, err)
	require.NoError(t, fs.MkdirAll(dst, 0o755))
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		f, err := fs.Create(filepath.Join(dst, e.Name()))
		require.NoError(t, err)
		_, err = f.Write(b)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	}
	require.NoError(t, vfs.SyncDir(fs, dst))
}

// bookKeeperDir lays out a stopped BookKeeper bookie's index directory:
// indexDir/current/locations from the fixture locations, .../ledgers from
// ledgers-fv5.
func bookKeeperDir(t testing.TB, fs vfs.FS, indexDir, locations string) {
	t.Helper()
	cur := filepath.Join(indexDir, "current")
	copyFixture(t, fs, locations, filepath.Join(cur, "locations"))
	copyFixture(t, fs, "ledgers-fv5", filepath.Join(cur, "ledgers"))
	require.NoError(t, vfs.SyncDir(fs, cur))
	require.NoError(t, vfs.SyncDir(fs, indexDir))
}

// scanFile reads an `ldb scan --hex` listing committed beside a fixture
// (RocksDB's own view, independent of our reader).
func scanFile(t testing.TB, name string) (keys, values [][]byte) {
	t.Helper()
	if c, ok := scanCache.Load(name); ok {
		kv := c.([2][][]byte)
		return kv[0], kv[1]
	}
	defer func() { scanCache.Store(name, [2][][]byte{keys, values}) }()
	f, err := os.Open(filepath.Join(rocksFixtures, name+".scan.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " : ")
		require.True(t, ok, sc.Text())
		kb, err := hex.DecodeString(strings.TrimPrefix(k, "0x"))
		require.NoError(t, err)
		vb, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
		require.NoError(t, err)
		keys, values = append(keys, kb), append(values, vb)
	}
	require.NoError(t, sc.Err())
	return keys, values
}

// scanCache holds the parsed listings (read-only once stored).
var scanCache sync.Map

// readAll returns every key and value of our DB at path.
func readAll(t testing.TB, fs vfs.FS, path string) (keys, values [][]byte) {
	t.Helper()
	opts := ondisk.LedgersEngineOptions(nil, nil) // small
	opts.FS, opts.ReadOnly = fs, true
	db, err := lsm.Open(path, &opts)
	require.NoError(t, err)
	defer db.Close()
	it, err := db.NewIter(nil)
	require.NoError(t, err)
	for ok := it.First(); ok; ok = it.Next() {
		keys = append(keys, bytes.Clone(it.Key()))
		values = append(values, bytes.Clone(it.Value()))
	}
	require.NoError(t, it.Error())
	require.NoError(t, it.Close())
	return keys, values
}

// expectMigrated checks that the migrated indexes under indexDir hold
// exactly the fixture's locations of the ledgers ledgers-fv5 holds (the
// ldb listings are the oracle) and one record per ledger with its
// fields, and that the RocksDB backups are still what RocksDB wrote.
func expectMigrated(t testing.TB, fs vfs.FS, indexDir, locations string) {
	t.Helper()
	cur := filepath.Join(indexDir, "current")
	ledKeys, ledValues := scanFile(t, "ledgers-fv5")
	exists := map[int64]upstreamLedgerData{}
	for i, k := range ledKeys {
		d, err := decodeUpstreamLedgerData(ledValues[i])
		require.NoError(t, err)
		exists[int64(binary.BigEndian.Uint64(k))] = d
	}
	locKeys, locValues := scanFile(t, locations)
	var wantKeys, wantValues [][]byte
	for i, k := range locKeys {
		if _, ok := exists[int64(binary.BigEndian.Uint64(k))]; ok {
			wantKeys, wantValues = append(wantKeys, k), append(wantValues, locValues[i])
		}
	}
	require.Less(t, len(wantKeys), len(locKeys), "the fixture has locations of ledgers the ledgers database lacks")
	gotKeys, gotValues := readAll(t, fs, filepath.Join(cur, "locations"))
	require.Equal(t, wantKeys, gotKeys)
	require.Equal(t, wantValues, gotValues)

	gotLed, gotRec := readAll(t, fs, filepath.Join(cur, "ledgers"))
	require.Len(t, gotLed, len(ledKeys))
	for i, k := range gotLed {
		require.Equal(t, ledKeys[i], k)
		info, err := ondisk.DecodeLedgerInfo(gotRec[i])
		require.NoError(t, err)
		d := exists[int64(binary.BigEndian.Uint64(k))]
		require.True(t, info.Exists)
		require.Equal(t, d.fenced, info.Fenced, "ledger %x", k)
		require.Equal(t, d.masterKey, info.MasterKey, "ledger %x", k)
		require.Equal(t, d.explicitLAC, info.ExplicitLAC, "ledger %x", k)
		require.False(t, info.PurgePending)
	}
	// The ledgers index opens and loads as the storage opens it.
	opts := ondisk.LedgersEngineOptions(nil, nil)
	opts.FS = fs
	db, err := lsm.Open(filepath.Join(cur, "ledgers"), &opts)
	require.NoError(t, err)
	var n, pending int
	require.NoError(t, ondisk.ScanLedgers(db, filepath.Join(cur, "ledgers"), func(_ int64, info ondisk.LedgerInfo) {
		if info.Exists {
			n++
		}
		if info.PurgePending {
			pending++
		}
	}))
	require.NoError(t, db.Close())
	require.EqualValues(t, len(ledKeys), n)
	require.Zero(t, pending)

	// The backups are the RocksDB databases, untouched and readable.
	for _, b := range []struct{ dir, fixture string }{{"locations", locations}, {"ledgers", "ledgers-fv5"}} {
		db, err := rocksdb.Open(fs, filepath.Join(cur, b.dir+ondisk.RocksDBBackupSuffix))
		require.NoError(t, err)
		var keys, values [][]byte
		require.NoError(t, db.Scan(func(k, v []byte) error {
			keys, values = append(keys, bytes.Clone(k)), append(values, bytes.Clone(v))
			return nil
		}))
		require.NoError(t, db.Close())
		wk, wv := scanFile(t, b.fixture)
		require.Equal(t, wk, keys)
		require.Equal(t, wv, values)
	}
	all, err := fs.List(cur)
	require.NoError(t, err)
	var names []string
	for _, n := range all {
		if !ondisk.IsBookKeeperFile(strings.TrimSuffix(n, LastMarkBackupSuffix)) {
			names = append(names, n)
		}
	}
	require.Equal(t, []string{"ledgers", "ledgers" + ondisk.RocksDBBackupSuffix, "locations", "locations" + ondisk.RocksDBBackupSuffix}, names)
}

// TestMigrateFixtures migrates each entry-location fixture, on the
// operating system's file system, and compares every key with RocksDB's
// own listing.
func TestMigrateFixtures(t *testing.T) {
	for _, fx := range []string{"bk-fv5", "bk-fv5-partitioned", "bk-fv2", "snappy-crc32c-fv4", "none-xxhash64-fv3", "random-fv5"} {
		t.Run(fx, func(t *testing.T) {
			dir := t.TempDir()
			bookKeeperDir(t, vfs.Default, dir, fx)
			var phases []string
			res, err := FromRocksDB(Options{IndexDir: dir, ClearLimbo: true, Progress: func(p Progress) {
				if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
					phases = append(phases, p.Phase)
				}
			}})
			require.NoError(t, err)
			require.False(t, res.NothingToDo)
			require.Equal(t, []string{"ledgers", "locations", "verify", "switch"}, phases)
			require.Greater(t, res.PurgedLedgers, 0)
			require.Greater(t, res.Verified, 0)
			require.Len(t, res.LimboCleared, 17)
			require.Zero(t, res.Skipped)
			expectMigrated(t, vfs.Default, dir, fx)

			// Idempotent: a second run changes nothing.
			again, err := FromRocksDB(Options{IndexDir: dir})
			require.NoError(t, err)
			require.True(t, again.NothingToDo)
			require.Contains(t, again.Reason, "already converted")
			expectMigrated(t, vfs.Default, dir, fx)
		})
	}
}

// TestMigratePurgesDeletedLedgers checks the counts of what bk-fv5 holds
// for ledgers ledgers-fv5 does not (10, 11 and 20).
func TestMigratePurgesDeletedLedgers(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	res, err := FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	require.Equal(t, 3, res.PurgedLedgers)
	require.EqualValues(t, 1+150+150, res.PurgedEntries)
	require.EqualValues(t, 3329-301, res.Entries)
	require.Equal(t, 289, res.Ledgers)
	got, _ := readAll(t, fs, "/idx/current/locations")
	require.Equal(t, 3329-301, len(got))
	for _, l := range []int64{10, 11, 20} {
		k := keyOf(l, 0)
		for _, g := range got {
			require.NotEqual(t, k[:8], g[:8])
		}
	}
}

func keyOf(ledgerID, entryID int64) []byte {
	k := binary.BigEndian.AppendUint64(nil, uint64(ledgerID))
	return binary.BigEndian.AppendUint64(k, uint64(entryID))
}

// TestMigrateRefusesLimbo: without ClearLimbo a directory with ledgers in
// limbo is refused, naming them, and left as it was.
func TestMigrateRefusesLimbo(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	_, err := FromRocksDB(Options{IndexDir: "/idx", FS: fs})
	require.True(t, errors.Is(err, ErrLimboLedgers), "%v", err)
	require.ErrorContains(t, err, "17 ledgers in limbo (8, 22,")
	names, err := fs.List("/idx/current")
	require.NoError(t, err)
	require.Equal(t, []string{"ledgers", "locations"}, names)
	rocks, err := ondisk.IsRocksDBDir(fs, "/idx/current/locations")
	require.NoError(t, err)
	require.True(t, rocks)
}

// TestMigrateRefusesOpenIndex: a directory an open storage holds is
// refused before anything changes, converted or not.
func TestMigrateRefusesOpenIndex(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	lock, err := lsm.LockDir(fs, "/idx/current/ledgers")
	require.NoError(t, err)
	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.ErrorContains(t, err, "/idx/current/ledgers")
	require.ErrorContains(t, err, "is in use: stop the bookie (BookKeeper, or bookie-index serve) first") // a held lock matches EWOULDBLOCK on every FS
	require.NoError(t, lock.Close())

	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	db, err := lsm.Open("/idx/current/locations", &lsm.Options{FS: fs})
	require.NoError(t, err)
	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs})
	require.ErrorContains(t, err, "/idx/current/locations")
	require.NoError(t, db.Close())
}

// TestMigrateNothingToDo: a directory with no indexes, or with a
// half-BookKeeper layout, is not touched.
func TestMigrateNothingToDo(t *testing.T) {
	fs := vfs.NewMem()
	res, err := FromRocksDB(Options{IndexDir: "/empty", FS: fs})
	require.NoError(t, err)
	require.True(t, res.NothingToDo)
	require.Equal(t, "no RocksDB index here", res.Reason)

	copyFixture(t, fs, "bk-fv5", "/half/current/locations")
	_, err = FromRocksDB(Options{IndexDir: "/half", FS: fs})
	require.ErrorContains(t, err, "/half/current/ledgers is missing")
}

// crashFS fails the mutating operation number at (counting from 0) of a
// migration, after taking a crash clone of the file system at that
// instant: what a power loss just before the operation leaves.
type crashFS struct {
	mem   *vfs.MemFS
	at    int
	n     int
	clone *vfs.MemFS
	op    vfs.Op
}

func (c *crashFS) MaybeError(op vfs.Op) error {
	switch op.Kind {
	case vfs.OpCreate, vfs.OpCreateExclusive, vfs.OpRename, vfs.OpRemove, vfs.OpRemoveAll, vfs.OpMkdirAll, vfs.OpSync, vfs.OpLink:
	default:
		return nil
	}
	c.n++
	if c.n-1 != c.at {
		return nil
	}
	c.clone = c.mem.CrashClone(vfs.CrashOptions{})
	c.op = op
	return vfs.ErrInjected
}

// TestMigrateCrash crashes a migration before each of its file-creating,
// renaming, removing and syncing operations, and checks that the crashed
// directory is in the old state (the RocksDB databases in place and
// intact) or has the marker, and that a rerun finishes the migration with
// every key right.
func TestMigrateCrash(t *testing.T) {
	base := vfs.NewMem()
	bookKeeperDir(t, base, "/idx", "bk-fv5-partitioned")
	writeFile(t, base, "/idx/current/lastMark", bkLastMark)
	opts := func(fs vfs.FS) Options {
		small := ondisk.LedgersEngineOptions(nil, nil)
		return Options{IndexDir: "/idx", FS: fs, ClearLimbo: true, Samples: 50, Engine: &small}
	}
	count := &crashFS{mem: base.CrashClone(vfs.CrashOptions{}), at: -1}
	_, err := FromRocksDB(opts(vfs.NewErrorFS(count.mem, count)))
	require.NoError(t, err)
	t.Logf("%d crash points", count.n)
	require.Greater(t, count.n, 20)
	states := map[string]int{}
	for at := 0; at < count.n; at++ {
		c := &crashFS{mem: base.CrashClone(vfs.CrashOptions{}), at: at}
		_, err := FromRocksDB(opts(vfs.NewErrorFS(c.mem, c)))
		// Ingest removes its source tables best effort: a failure there
		// is no failure of the migration. The crash is the clone.
		require.True(t, err == nil || errors.Is(err, vfs.ErrInjected), "crash point %d (%s): %v", at, c.op, err)
		require.NotNil(t, c.clone)
		crashed := c.clone

		pending, err := ondisk.MigrationPending(crashed, "/idx")
		require.NoError(t, err)
		if pending {
			states["marker"]++
			// The copy of BookKeeper's files is whole before the marker.
			require.Equal(t, bkLastMark, readFileBytes(t, crashed, "/idx/current/lastMark"+LastMarkBackupSuffix), "crash point %d", at)
		} else {
			// The old state: both RocksDB databases where upstream reads
			// them, whole.
			states["old"]++
			for _, d := range []struct{ dir, fixture string }{{"locations", "bk-fv5-partitioned"}, {"ledgers", "ledgers-fv5"}} {
				db, err := rocksdb.Open(crashed, filepath.Join("/idx/current", d.dir))
				require.NoError(t, err, "crash point %d", at)
				n := 0
				require.NoError(t, db.Scan(func(k, v []byte) error { n++; return nil }))
				require.NoError(t, db.Close())
				keys, _ := scanFile(t, d.fixture)
				require.Equal(t, len(keys), n, "crash point %d", at)
			}
		}
		res, err := FromRocksDB(opts(crashed))
		require.NoError(t, err, "crash point %d", at)
		require.Equal(t, pending, res.Resumed, "crash point %d", at)
		expectMigrated(t, crashed, "/idx", "bk-fv5-partitioned")
	}
	t.Logf("states after a crash: %v", states)
	require.Positive(t, states["old"])
	require.Positive(t, states["marker"])
}

// TestMigrateFailureLeavesOldState: an I/O error at any point of the
// build leaves the RocksDB databases in place and no temporary directory
// once the error is returned (cleanup permitting).
func TestMigrateFailureLeavesOldState(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	efs := vfs.NewErrorFS(fs, vfs.OnOp(vfs.OpLink, ""))
	_, err := FromRocksDB(Options{IndexDir: "/idx", FS: efs, ClearLimbo: true})
	require.True(t, errors.Is(err, vfs.ErrInjected), "%v", err)
	names, err := fs.List("/idx/current")
	require.NoError(t, err)
	require.Equal(t, []string{"ledgers", "locations"}, names)
	_, err = FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	expectMigrated(t, fs, "/idx", "bk-fv5")
}

func TestDecodeUpstreamLedgerData(t *testing.T) {
	// From ledgers-fv5: exists, not fenced, masterKey, explicitLac.
	v, _ := hex.DecodeString("080110001A0C6D61737465722D6B65792D3522196C61632D357878787878787878787878787878787878787878")
	d, err := decodeUpstreamLedgerData(v)
	require.NoError(t, err)
	require.True(t, d.exists)
	require.False(t, d.fenced)
	require.False(t, d.limbo)
	require.Equal(t, "master-key-5", string(d.masterKey))
	require.Equal(t, "lac-5"+strings.Repeat("x", 20), string(d.explicitLAC))

	// Limbo, an empty but present explicit LAC, an unknown field of each
	// wire type, and fields out of order.
	v = []byte{0x28, 0x01, 0x22, 0x00, 0x1A, 0x00, 0x10, 0x01, 0x08, 0x01,
		0x30, 0x05, 0x39, 1, 2, 3, 4, 5, 6, 7, 8, 0x45, 1, 2, 3, 4, 0x4A, 0x01, 0xFF}
	d, err = decodeUpstreamLedgerData(v)
	require.NoError(t, err)
	require.True(t, d.exists && d.fenced && d.limbo)
	require.NotNil(t, d.explicitLAC)
	require.Empty(t, d.explicitLAC)
	require.Empty(t, d.masterKey)

	for _, c := range []struct {
		hex, err string
	}{
		{"", "required field exists (1) missing"},
		{"0801", "required field fenced (2) missing"},
		{"08011001", "required field masterKey (3) missing"},
		{"0A00", "field 1 has wire type 2, want 0"},
		{"08011001" + "1A05414243", "field 3: bad length at offset 5"},
		{"0801100133", "unsupported wire type 3"},
		{"00", "field number 0"},
		{"08", "field 1: bad varint at offset 1"},
		{"4101", "field 8: truncated"},
	} {
		b, err := hex.DecodeString(c.hex)
		require.NoError(t, err)
		_, err = decodeUpstreamLedgerData(b)
		require.ErrorContains(t, err, c.err, c.hex)
	}
}

func FuzzDecodeUpstreamLedgerData(f *testing.F) {
	_, values := scanFile(f, "ledgers-fv5")
	for _, v := range values[:8] {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeUpstreamLedgerData(b)
		if err != nil {
			return
		}
		// What decodes converts to a record that decodes back the same.
		info := ondisk.LedgerInfo{Exists: true, Fenced: d.fenced, MasterKey: d.masterKey, ExplicitLAC: d.explicitLAC}
		if len(info.MasterKey) == 0 {
			info.MasterKey = nil
		}
		got, err := ondisk.DecodeLedgerInfo(ondisk.EncodeLedgerInfo(&info))
		require.NoError(t, err)
		require.True(t, equalLedgerInfo(&got, &info))
	})
}

// appendWALBatch appends to the RocksDB WAL at path one WriteBatch of
// puts at sequence seq, as one full record of the log format (RocksDB's
// legacy header: masked CRC-32C of type and payload, length, type 1), so
// that a fixture gains values real RocksDB could not be asked to write
// here: a deleted LedgerData, ids this index refuses.
func appendWALBatch(t *testing.T, fs vfs.FS, path string, seq uint64, puts [][2][]byte) {
	t.Helper()
	b := binary.LittleEndian.AppendUint64(nil, seq)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(puts)))
	for _, p := range puts {
		b = append(b, 1) // kTypeValue
		b = binary.AppendUvarint(b, uint64(len(p[0])))
		b = append(b, p[0]...)
		b = binary.AppendUvarint(b, uint64(len(p[1])))
		b = append(b, p[1]...)
	}
	c := crc32.Update(crc32.Checksum([]byte{1}, crc32.MakeTable(crc32.Castagnoli)), crc32.MakeTable(crc32.Castagnoli), b)
	c = (c>>15 | c<<17) + 0xa282ead8
	f, err := fs.Open(path)
	require.NoError(t, err)
	size, err := f.Size()
	require.NoError(t, err)
	old := make([]byte, size)
	_, err = f.ReadAt(old, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Less(t, size%(32<<10)+7+int64(len(b)), int64(32<<10), "the record fits in the block")
	rec := binary.LittleEndian.AppendUint32(nil, c)
	rec = binary.LittleEndian.AppendUint16(rec, uint16(len(b)))
	rec = append(append(rec, 1), b...)
	w, err := fs.Create(path)
	require.NoError(t, err)
	_, err = w.Write(append(old, rec...))
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
}

func lastSequence(t *testing.T, fs vfs.FS, dir string) uint64 {
	db, err := rocksdb.Open(fs, dir)
	require.NoError(t, err)
	defer db.Close()
	require.Empty(t, db.Props().Torn)
	return db.Props().LastSequence
}

// TestMigrateDeletedAndSkipped: a LedgerData with exists=false is dropped
// with its locations; locations with a negative id or a location <= 0 are
// skipped and named; the rest migrates.
func TestMigrateDeletedAndSkipped(t *testing.T) {
	fs := vfs.NewMem()
	bookKeeperDir(t, fs, "/idx", "bk-fv5")
	led, loc := "/idx/current/ledgers", "/idx/current/locations"
	deleted := []byte{0x08, 0x00, 0x10, 0x00, 0x1A, 0x00} // exists=false
	appendWALBatch(t, fs, led+"/000010.log", lastSequence(t, fs, led)+1, [][2][]byte{{binary.BigEndian.AppendUint64(nil, 1), deleted}})
	location := func(l int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(l)) }
	appendWALBatch(t, fs, loc+"/000016.log", lastSequence(t, fs, loc)+1, [][2][]byte{
		{keyOf(5, -1), location(7)},
		{keyOf(5, 200), location(0)},
		{keyOf(6, 3), location(-5)},
		{keyOf(-2, 0), location(9)},
	})
	res, err := FromRocksDB(Options{IndexDir: "/idx", FS: fs, ClearLimbo: true})
	require.NoError(t, err)
	require.Equal(t, 1, res.DeletedLedgers)
	require.Equal(t, 288, res.Ledgers)
	require.Equal(t, 4, res.PurgedLedgers, "1, 10, 11, 20")
	require.EqualValues(t, 150+301, res.PurgedEntries)
	require.EqualValues(t, 4, res.Skipped)
	require.Equal(t, []string{
		"000000000000000500000000000000c8: location 0 (upstream reads 0 as no location)",
		"0000000000000005ffffffffffffffff: negative ledger or entry id (this index holds none)",
		"00000000000000060000000000000003: location -5 (upstream reads 0 as no location)",
		"fffffffffffffffe0000000000000000: negative ledger or entry id (this index holds none)",
	}, res.SkippedKeys)

	keys, _ := readAll(t, fs, loc)
	// Less ledger 1's, the purged ledgers', and (6, 3), now a location
	// of -5.
	require.Equal(t, 3329-150-301-1, len(keys))
	for _, k := range keys {
		require.NotEqual(t, int64(1), int64(binary.BigEndian.Uint64(k)))
	}
	ledgers, _ := readAll(t, fs, led)
	require.Equal(t, 288, len(ledgers))
	require.NotEqual(t, binary.BigEndian.AppendUint64(nil, 1), ledgers[0])
}
