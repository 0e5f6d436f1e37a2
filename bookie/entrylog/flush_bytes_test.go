package entrylog

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// TestFlushIntervalBytes: with FlushIntervalBytes (flushEntrylogBytes) the
// file system sees a sync of the log each time the records added since the
// last one reach that many bytes, every record written before it; without
// it, only Flush syncs. Durability still comes from Flush (which also
// syncs the directory): after it every record reads back from a
// power-loss image.
func TestFlushIntervalBytes(t *testing.T) {
	const record = RecordOverhead + 1000
	for _, interval := range []int64{0, 10 << 10, 1} {
		mem := vfs.NewMem()
		var sizes []int64 // the log's size at each sync of a log
		fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
			if op.Kind == vfs.OpSync && filepath.Ext(op.Path) == ".log" {
				fi, err := mem.Stat(op.Path)
				require.NoError(t, err)
				sizes = append(sizes, fi.Size())
			}
			return nil
		}))
		l, err := Open(testDir, &Options{FS: fs, WriteBufferSize: 4 << 10, FlushIntervalBytes: interval})
		require.NoError(t, err)
		var ws []written
		for e := range int64(100) {
			p := payloadOf(3, e, 1000)
			loc, err := l.AddEntry(3, e, p)
			require.NoError(t, err)
			ws = append(ws, written{3, e, loc, p})
		}
		m := l.Metrics()
		if interval <= 0 {
			require.Empty(t, sizes, "no sync before Flush")
			require.Zero(t, m.RegularSyncs)
		} else {
			every := (interval + record - 1) / record // records between syncs
			require.Equal(t, 100/every, int64(len(sizes)), "interval %d", interval)
			require.Equal(t, int64(len(sizes)), m.RegularSyncs)
			for i, size := range sizes {
				require.Equal(t, HeaderSize+int64(i+1)*every*record, size, "sync %d: every record added before it written", i)
			}
		}
		require.NoError(t, l.Flush())
		require.NoError(t, l.Close())
		crashed, err := Open(testDir, &Options{FS: mem.CrashClone(vfs.CrashOptions{})})
		require.NoError(t, err)
		for _, w := range ws {
			got, err := crashed.ReadEntry(w.ledgerID, w.entryID, w.location)
			require.NoError(t, err)
			require.Equal(t, w.payload, got)
		}
		require.NoError(t, crashed.Close())
	}
}

// TestFlushIntervalBytesSyncFails: a failed sync of FlushIntervalBytes
// fails the AddEntry that triggered it, naming the log and the cause, and
// abandons the log as a failed write does: the next record starts a new
// log, and the records written again after the failure are durable at the
// next Flush.
func TestFlushIntervalBytesSyncFails(t *testing.T) {
	mem := vfs.NewMem()
	armed := false
	fs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op) error {
		if armed && op.Kind == vfs.OpSync && filepath.Ext(op.Path) == ".log" {
			armed = false
			return syscall.EIO
		}
		return nil
	}))
	l, err := Open(testDir, &Options{FS: fs, FlushIntervalBytes: 8 << 10})
	require.NoError(t, err)
	first := l.CurrentLogID()
	armed = true
	var failedAt int64 = -1
	for e := range int64(20) {
		if _, err := l.AddEntry(1, e, payloadOf(1, e, 1000)); err != nil {
			require.ErrorIs(t, err, syscall.EIO)
			require.ErrorContains(t, err, "flushEntrylogBytes")
			require.ErrorContains(t, err, ".log")
			failedAt = e
			break
		}
		if first < 0 {
			first = l.CurrentLogID()
		}
	}
	require.GreaterOrEqual(t, failedAt, int64(0), "the sync failed an add")
	require.Equal(t, int64(-1), l.CurrentLogID(), "the log is abandoned")
	// The caller writes everything not flushed again.
	var ws []written
	for e := range int64(20) {
		p := payloadOf(1, e, 1000)
		loc, err := l.AddEntry(1, e, p)
		require.NoError(t, err)
		ws = append(ws, written{1, e, loc, p})
	}
	require.NotEqual(t, first, l.CurrentLogID(), "a new log")
	require.NoError(t, l.Flush())
	require.NoError(t, l.Close())
	crashed, err := Open(testDir, &Options{FS: mem.CrashClone(vfs.CrashOptions{})})
	require.NoError(t, err)
	for _, w := range ws {
		got, err := crashed.ReadEntry(w.ledgerID, w.entryID, w.location)
		require.NoError(t, err)
		require.Equal(t, w.payload, got)
	}
	require.NoError(t, crashed.Close())
}
