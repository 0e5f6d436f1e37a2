package rocksdb

import (
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestMeasure times Open, a full Scan and random Gets on a database named
// by ROCKSDB_MEASURE_DIR (made by `testdata/gen measure-1m DIR`); see
// docs/design.md.
func TestMeasure(t *testing.T) {
	dir := os.Getenv("ROCKSDB_MEASURE_DIR")
	if dir == "" {
		t.Skip("set ROCKSDB_MEASURE_DIR to a database made by `gen measure-1m`")
	}
	start := time.Now()
	db, err := Open(vfs.Default, dir)
	require.NoError(t, err)
	defer db.Close()
	opened := time.Since(start)

	start = time.Now()
	var keys [][]byte
	n := 0
	require.NoError(t, db.Scan(func(k, v []byte) error {
		if n%100 == 0 {
			keys = append(keys, append([]byte(nil), k...))
		}
		n++
		return nil
	}))
	scanned := time.Since(start)

	rng := rand.New(rand.NewSource(1))
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	start = time.Now()
	for _, k := range keys {
		_, err := db.Get(k)
		require.NoError(t, err)
	}
	got := time.Since(start)
	var files int
	for _, l := range db.Props().Levels {
		files += l.Files
	}
	t.Logf("%d tables; open %v; scan of %d keys %v (%.0f ns/key); %d random gets %v (%.1f µs/get)",
		files, opened, n, scanned, float64(scanned.Nanoseconds())/float64(n), len(keys), got, float64(got.Microseconds())/float64(len(keys)))
}
