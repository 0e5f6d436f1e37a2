package check

import (
	"testing"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/bookie/internal/storagetest"
	"github.com/bookie-index/bookie-index/bookie/ondisk"
	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestLedgersIndexRecords: a record that does not decode is a problem named
// by its ledger; the others are counted.
func TestLedgersIndexRecords(t *testing.T) {
	mem := vfs.NewMem()
	opts := (&checkFixture{dir: "/data/ledgers"}).options()
	opts.FS = mem
	s, err := bookie.Open(opts)
	require.NoError(t, err)
	storagetest.WriteWorkload(t, s)
	require.NoError(t, s.Close())
	ledgers := "/data/ledgers/current/ledgers"
	res, err := LedgersIndex(mem, "/data/ledgers")
	require.NoError(t, err)
	require.Empty(t, res.Problems)
	require.Equal(t, LedgersIndexResult{Path: ledgers, Records: 7, Existing: 7, Fenced: 5}, *res)

	db, err := lsm.Open(ledgers, &lsm.Options{FS: mem})
	require.NoError(t, err)
	var b lsm.Batch
	b.Set(ondisk.LedgerKey(4), []byte{9, 0, 0})
	require.NoError(t, db.Apply(&b, lsm.Sync))
	require.NoError(t, db.Close())
	res, err = LedgersIndex(mem, "/data/ledgers")
	require.NoError(t, err)
	require.Len(t, res.Problems, 1)
	require.Contains(t, res.Problems[0], "ledger 4 (key 0000000000000004): bookie: ledger record of 3 bytes, too short")

	require.NoError(t, mem.RemoveAll(ledgers))
	_, err = LedgersIndex(mem, "/data/ledgers")
	require.ErrorIs(t, err, ondisk.ErrLedgersIndexMissing)
}
