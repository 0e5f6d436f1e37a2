package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sort"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

func entryKey(ledger, entry uint64) []byte {
	k := make([]byte, 16)
	binary.BigEndian.PutUint64(k, ledger)
	binary.BigEndian.PutUint64(k[8:], entry)
	return k
}

// TestFixtureGet looks up every key of ldb's scan, and keys the fixture's
// writes deleted (point deletes in tables, single delete, range deletions in
// a table and in the WAL) or never wrote.
func TestFixtureGet(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			want := ldbScan(t, filepath.Join("testdata", name+".scan.txt"))
			db, err := Open(vfs.Default, filepath.Join("testdata", name))
			require.NoError(t, err)
			defer db.Close()
			for _, kv := range want {
				v, err := db.Get(kv[0])
				require.NoError(t, err, "%x", kv[0])
				require.Equal(t, kv[1], v, "%x", kv[0])
			}
			for _, k := range [][]byte{
				entryKey(3, 0), entryKey(3, 149), // range deletion in L5
				entryKey(10, 0), entryKey(10, 4), // range deletion in the WAL
				entryKey(7, 0), entryKey(7, 49), // point deletes
				entryKey(26, 10), // single delete
				entryKey(27, 5),  // delete in the WAL
				entryKey(0, 0), entryKey(29, 0), entryKey(1, 150), {}, {0xff},
			} {
				_, err := db.Get(k)
				require.ErrorIs(t, err, ErrNotFound, "%x", k)
			}
			// Written after the WAL's range deletion: visible.
			v, err := db.Get(entryKey(10, 3))
			require.NoError(t, err)
			require.Equal(t, uint64(5<<32|5), binary.BigEndian.Uint64(v))
			// Deleted in L0, put again in a newer L0 table.
			v, err = db.Get(entryKey(1, 0))
			require.NoError(t, err)
			require.Equal(t, uint64(4<<32|3), binary.BigEndian.Uint64(v))
		})
	}
}

// TestFixtureSeek checks that SeekGE from every key of ldb's scan, and from
// the keys between them, lands where a walk from the start does.
func TestFixtureSeek(t *testing.T) {
	want := ldbScan(t, filepath.Join("testdata", "bk-fv5-partitioned.scan.txt"))
	db, err := Open(vfs.Default, filepath.Join("testdata", "bk-fv5-partitioned"))
	require.NoError(t, err)
	defer db.Close()
	it := db.NewIter()
	for i := 0; i < len(want); i += 7 {
		it.SeekGE(want[i][0])
		require.True(t, it.Valid())
		require.Equal(t, want[i][0], it.Key())
		// Just below the key: the first key >= that.
		below := append([]byte(nil), want[i][0]...)
		if below[len(below)-1] > 0 {
			below[len(below)-1]--
			j := sort.Search(len(want), func(j int) bool { return bytes.Compare(want[j][0], below) >= 0 })
			it.SeekGE(below)
			require.True(t, it.Valid())
			require.Equal(t, want[j][0], it.Key(), "seek %x", below)
		}
		// Just above: the next key.
		it.SeekGE(append(append([]byte(nil), want[i][0]...), 0))
		if i+1 < len(want) {
			require.True(t, it.Valid())
			require.Equal(t, want[i+1][0], it.Key())
			require.Equal(t, want[i+1][1], it.Value())
		} else {
			require.False(t, it.Valid())
		}
	}
	require.NoError(t, it.Err())
}

// TestFixtureProps checks the layout the generator made: tables in L0, L5
// and L6, a range deletion in a table and one in the WAL.
func TestFixtureProps(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			db, err := Open(vfs.Default, filepath.Join("testdata", name))
			require.NoError(t, err)
			defer db.Close()
			p := db.Props()
			require.Equal(t, bytewiseComparator, p.Comparator)
			require.Len(t, p.Levels, 7)
			require.Equal(t, 2, p.Levels[0].Files)
			require.Equal(t, 1, p.Levels[5].Files)
			require.Equal(t, 1, p.Levels[6].Files)
			require.Equal(t, uint64(3000), p.Levels[6].Entries)
			require.Equal(t, 2, p.RangeDeletions)
			require.Equal(t, []string{"000016.log"}, p.WALs)
			require.Equal(t, 44, p.WALOperations)
			require.Equal(t, uint64(3790), p.LastSequence)
			var parts int
			for _, tp := range p.Tables {
				parts += tp.IndexPartitions
			}
			if name == "bk-fv5-partitioned" {
				require.Greater(t, parts, 1)
			} else {
				require.Zero(t, parts)
			}
		})
	}
}

// TestRandomFixtureGet looks up every key the random fixture's writes could
// have touched and compares with ldb's scan: present with its value, or
// absent.
func TestRandomFixtureGet(t *testing.T) {
	want := map[string][]byte{}
	for _, kv := range ldbScan(t, filepath.Join("testdata", randomFixture+".scan.txt")) {
		want[string(kv[0])] = kv[1]
	}
	db, err := Open(vfs.Default, filepath.Join("testdata", randomFixture))
	require.NoError(t, err)
	defer db.Close()
	for ledger := uint64(0); ledger <= 31; ledger++ {
		for entry := uint64(0); entry <= 200; entry++ {
			k := entryKey(ledger, entry)
			v, err := db.Get(k)
			if w, ok := want[string(k)]; ok {
				require.NoError(t, err, "%x", k)
				require.Equal(t, w, v, "%x", k)
			} else {
				require.ErrorIs(t, err, ErrNotFound, "%x", k)
			}
		}
	}
}

// TestConcurrentIterators runs lookups and scans from several goroutines on
// one DB (run under -race).
func TestConcurrentIterators(t *testing.T) {
	want := ldbScan(t, filepath.Join("testdata", "bk-fv5.scan.txt"))
	db, err := Open(vfs.Default, filepath.Join("testdata", "bk-fv5"))
	require.NoError(t, err)
	defer db.Close()
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			done <- func() error {
				for i := g; i < len(want); i += 5 {
					v, err := db.Get(want[i][0])
					if err != nil {
						return err
					}
					if !bytes.Equal(v, want[i][1]) {
						return fmt.Errorf("key %x: %x, want %x", want[i][0], v, want[i][1])
					}
				}
				got, err := scanAll(db)
				if err == nil && !equalKVs(got, want) {
					err = fmt.Errorf("scan differs")
				}
				return err
			}()
		}(g)
	}
	for g := 0; g < 4; g++ {
		require.NoError(t, <-done)
	}
}
