package migrate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm/rocksdb"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// rocksScan is every key and value of a RocksDB fixture as the reader
// yields them.
func rocksScan(t *testing.T, name string) (keys, values [][]byte) {
	t.Helper()
	db, err := rocksdb.Open(vfs.Default, filepath.Join(rocksFixtures, name))
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.Scan(func(k, v []byte) error {
		keys, values = append(keys, bytes.Clone(k)), append(values, bytes.Clone(v))
		return nil
	}))
	return keys, values
}

// checkRocksDigest checks a scan of a rocksdbjni fixture against the SHA-256
// of its keys and values that RocksDB reported (its <name>.json), so that
// what a migration is compared with is RocksDB's own view.
func checkRocksDigest(t *testing.T, name string, keys, values [][]byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(rocksFixtures, name+".json"))
	if os.IsNotExist(err) {
		return // an ldb fixture: checked against ldb scan in lsm/rocksdb
	}
	require.NoError(t, err)
	var want struct {
		SHA256 string `json:"sha256"`
	}
	require.NoError(t, json.Unmarshal(raw, &want))
	h := sha256.New()
	for i := range keys {
		for _, b := range [][]byte{keys[i], values[i]} {
			h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
			h.Write(b)
		}
	}
	require.Equal(t, want.SHA256, hex.EncodeToString(h.Sum(nil)), name)
}

// TestMigrateRocksDBVersions migrates bookie index directories whose two
// databases RocksDB 9 and 10 wrote with their defaults and BookKeeper's
// options (format_version 5, 6 and 7; XXH3 and xxHash; LZ4 and Snappy; a
// partitioned index) and ones Debian's ldb 7.8.3 rewrote (every table
// naming the StringAppendOperator merge operator): every location of a
// ledger the ledgers database holds, and every ledger's fenced flag,
// master key and explicit LAC, must arrive; the backups must read as the
// sources did.
func TestMigrateRocksDBVersions(t *testing.T) {
	for _, c := range []struct{ name, locations, ledgers string }{
		{"rocksdb 10, format_version 7, XXH3", "rocksdbjni/loc-v10-fv7-xxh3-lz4", "rocksdbjni/ledgers-v10-fv7-xxh3-snappy"},
		{"rocksdb 10, format_version 7, partitioned index", "rocksdbjni/loc-v10-fv7-xxh3-lz4-partitioned", "rocksdbjni/ledgers-v10-fv7-xxh3-snappy"},
		{"rocksdb 10 defaults, format_version 6, XXH3", "rocksdbjni/loc-v10-fv6-xxh3-lz4", "rocksdbjni/ledgers-v10-fv6-xxh3-snappy"},
		{"rocksdb 10, format_version 6, CRC32c, uncompressed", "rocksdbjni/loc-v10-fv6-crc32c-none", "rocksdbjni/ledgers-v10-fv6-xxh3-snappy"},
		{"rocksdb 9 (BookKeeper 4.18.2) defaults", "rocksdbjni/loc-v9-fv6-xxh3-lz4", "rocksdbjni/ledgers-v9-fv6-xxh3-snappy"},
		{"rocksdb 9 (BookKeeper 4.18.2) bookie-conf", "rocksdbjni/loc-v9-fv5-xxhash-lz4", "rocksdbjni/ledgers-v9-fv5-xxhash-snappy"},
		{"rewritten by ldb compact", "ldb/ldb-compact-loc", "ldb/ldb-compact-ledgers"},
		{"reloaded by ldb load", "ldb/ldb-load-loc", "ldb/ldb-compact-ledgers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.NewMem()
			const dir = "/idx"
			cur := filepath.Join(dir, "current")
			copyFixture(t, fs, c.locations, filepath.Join(cur, "locations"))
			copyFixture(t, fs, c.ledgers, filepath.Join(cur, "ledgers"))
			require.NoError(t, vfs.SyncDir(fs, cur))
			require.NoError(t, vfs.SyncDir(fs, dir))

			locKeys, locValues := rocksScan(t, c.locations)
			checkRocksDigest(t, c.locations, locKeys, locValues)
			ledKeys, ledValues := rocksScan(t, c.ledgers)
			checkRocksDigest(t, c.ledgers, ledKeys, ledValues)
			ledgers := map[uint64]upstreamLedgerData{}
			for i, k := range ledKeys {
				d, err := decodeUpstreamLedgerData(ledValues[i])
				require.NoError(t, err)
				ledgers[binary.BigEndian.Uint64(k)] = d
			}
			var wantKeys, wantValues [][]byte
			purged := map[uint64]bool{}
			for i, k := range locKeys {
				if _, ok := ledgers[binary.BigEndian.Uint64(k)]; ok {
					wantKeys, wantValues = append(wantKeys, k), append(wantValues, locValues[i])
				} else {
					purged[binary.BigEndian.Uint64(k)] = true
				}
			}
			require.NotEmpty(t, purged, "the fixtures hold locations of ledgers the ledgers database lacks")

			res, err := FromRocksDB(Options{IndexDir: dir, FS: fs, ClearLimbo: true})
			require.NoError(t, err)
			require.False(t, res.NothingToDo)
			require.EqualValues(t, len(wantKeys), res.Entries)
			require.Equal(t, len(purged), res.PurgedLedgers)
			require.Equal(t, len(ledKeys), res.Ledgers)
			require.Zero(t, res.Skipped)
			require.Greater(t, res.Verified, 0)

			gotKeys, gotValues := readAll(t, fs, filepath.Join(cur, "locations"))
			require.Equal(t, wantKeys, gotKeys)
			require.Equal(t, wantValues, gotValues)
			gotLed, gotRec := readAll(t, fs, filepath.Join(cur, "ledgers"))
			require.Equal(t, ledKeys, gotLed)
			for i, k := range gotLed {
				info, err := ondisk.DecodeLedgerInfo(gotRec[i])
				require.NoError(t, err)
				d := ledgers[binary.BigEndian.Uint64(k)]
				require.True(t, info.Exists)
				require.Equal(t, d.fenced, info.Fenced, "ledger %x", k)
				require.Equal(t, d.masterKey, info.MasterKey, "ledger %x", k)
				require.Equal(t, d.explicitLAC, info.ExplicitLAC, "ledger %x", k)
			}

			// The backups are the RocksDB databases, readable as before.
			for _, b := range []struct {
				dir          string
				keys, values [][]byte
			}{{"locations", locKeys, locValues}, {"ledgers", ledKeys, ledValues}} {
				db, err := rocksdb.Open(fs, filepath.Join(cur, b.dir+ondisk.RocksDBBackupSuffix))
				require.NoError(t, err)
				var keys, values [][]byte
				require.NoError(t, db.Scan(func(k, v []byte) error {
					keys, values = append(keys, bytes.Clone(k)), append(values, bytes.Clone(v))
					return nil
				}))
				require.NoError(t, db.Close())
				require.Equal(t, b.keys, keys)
				require.Equal(t, b.values, values)
			}
		})
	}
}

// TestMigrateRefusesMergeRecords: a locations database with a merge record
// (RocksDB 10 wrote it with StringAppendOperator) is refused naming the key,
// and the directory is left as it was.
func TestMigrateRefusesMergeRecords(t *testing.T) {
	fs := vfs.NewMem()
	const dir = "/idx"
	cur := filepath.Join(dir, "current")
	copyFixture(t, fs, "rocksdbjni/merge-v10-fv6-xxh3-lz4", filepath.Join(cur, "locations"))
	copyFixture(t, fs, "rocksdbjni/ledgers-v10-fv6-xxh3-snappy", filepath.Join(cur, "ledgers"))
	require.NoError(t, vfs.SyncDir(fs, cur))
	_, err := FromRocksDB(Options{IndexDir: dir, FS: fs, ClearLimbo: true})
	require.ErrorIs(t, err, rocksdb.ErrUnsupported)
	require.ErrorContains(t, err, "merge record for key 00000000000000010000000000000005")
	names, err := fs.List(cur)
	require.NoError(t, err)
	require.Equal(t, []string{"ledgers", "locations"}, names)
	rocks, err := ondisk.IsRocksDBDir(fs, filepath.Join(cur, "locations"))
	require.NoError(t, err)
	require.True(t, rocks)
}
