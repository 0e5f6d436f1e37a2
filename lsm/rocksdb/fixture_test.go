package rocksdb

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// fixtures are the databases testdata/gen made with real RocksDB; beside
// each, <name>.scan.txt is `ldb --db=<name> scan --hex` of it.
var fixtures = []string{"bk-fv2", "bk-fv5", "bk-fv5-partitioned", "snappy-crc32c-fv4", "none-xxhash64-fv3"}

// randomFixture is seeded random puts, deletes and range deletions through
// automatic compactions of small files over several levels.
const randomFixture = "random-fv5"

// ledgersFixture is a ledger-metadata database (8-byte ledger ids, upstream's
// LedgerData protobuf values) with the options BookKeeper gives it: RocksDB's
// defaults (Snappy, no filter), format_version 5, kxxHash.
const ledgersFixture = "ledgers-fv5"

// ldbScan parses `ldb scan --hex` output: "0xKEY : 0xVALUE" lines.
func ldbScan(t *testing.T, path string) [][2][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var kvs [][2][]byte
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), " : ")
		require.True(t, ok, "line %q", s.Text())
		kb, err := hex.DecodeString(strings.TrimPrefix(k, "0x"))
		require.NoError(t, err)
		vb, err := hex.DecodeString(strings.TrimPrefix(v, "0x"))
		require.NoError(t, err)
		kvs = append(kvs, [2][]byte{kb, vb})
	}
	require.NoError(t, s.Err())
	return kvs
}

func scanAll(db *DB) ([][2][]byte, error) {
	var kvs [][2][]byte
	err := db.Scan(func(k, v []byte) error {
		kvs = append(kvs, [2][]byte{append([]byte(nil), k...), append([]byte(nil), v...)})
		return nil
	})
	return kvs, err
}

func TestFixturesMatchLdbScan(t *testing.T) {
	for _, name := range append(fixtures, randomFixture, ledgersFixture) {
		t.Run(name, func(t *testing.T) {
			want := ldbScan(t, filepath.Join("testdata", name+".scan.txt"))
			db, err := Open(vfs.Default, filepath.Join("testdata", name))
			require.NoError(t, err)
			defer db.Close()
			got, err := scanAll(db)
			require.NoError(t, err)
			require.Equal(t, len(want), len(got))
			for i := range want {
				require.Equal(t, want[i], got[i], "entry %d", i)
			}
			p := db.Props()
			t.Logf("%+v", p.Levels)
			t.Logf("log %d last seq %d WALs %v ops %d range dels %d", p.LogNumber, p.LastSequence, p.WALs, p.WALOperations, p.RangeDeletions)
			for _, tp := range p.Tables {
				t.Logf("%+v", tp)
			}
			_ = fmt.Sprint
		})
	}
}
