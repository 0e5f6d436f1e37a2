package entrylog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// TestMetadataWrittenAtRotation checks that a rotated log gets its ledgers
// map with each ledger's record bytes (counted while writing, persisted at
// the first Metadata or at Close), that a log without one (or with a
// damaged one) gets the same map from a scan, and that the log being
// written has none.
func TestMetadataWrittenAtRotation(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("d", &Options{FS: fs, LogSizeLimit: 4096})
	require.NoError(t, err)
	want := map[int64]map[int64]int64{} // log -> ledger -> bytes
	for i := 0; i < 60; i++ {
		ledger := int64(i % 7)
		payload := make([]byte, 100+i)
		loc, err := l.AddEntry(ledger, int64(i), payload)
		require.NoError(t, err)
		id := LocationLogID(loc)
		if want[id] == nil {
			want[id] = map[int64]int64{}
		}
		want[id][ledger] += int64(RecordOverhead + len(payload))
	}
	require.NoError(t, l.Flush())
	cur := l.CurrentLogID()
	require.Greater(t, cur, int64(1))
	_, err = l.Metadata(cur)
	require.ErrorIs(t, err, ErrInvalidArgument)

	check := func(id int64) {
		m, err := l.Metadata(id)
		require.NoError(t, err)
		got := map[int64]int64{}
		for _, u := range m.Ledgers {
			got[u.LedgerID] = u.Bytes
		}
		require.Equal(t, want[id], got, "log %d", id)
		size, err := fs.Stat(l.LogPath(id))
		require.NoError(t, err)
		require.Equal(t, size.Size(), m.Size)
		require.InDelta(t, 1.0, m.Usage(), 1e-9)
	}
	for id := int64(0); id < cur; id++ {
		// Counted while writing; persisted by the first Metadata, off
		// the write path.
		_, err := fs.Stat(filepath.Join("d", MetadataFileName(id)))
		require.Error(t, err, "log %d", id)
		check(id)
		_, err = fs.Stat(filepath.Join("d", MetadataFileName(id)))
		require.NoError(t, err, "log %d has no ledgers map", id)
		check(id) // from the file now
	}
	// A missing map and a damaged one: rebuilt by a scan, and written.
	require.NoError(t, fs.Remove(filepath.Join("d", MetadataFileName(0))))
	check(0)
	_, err = fs.Stat(filepath.Join("d", MetadataFileName(0)))
	require.NoError(t, err)
	f, err := fs.Create(filepath.Join("d", MetadataFileName(1)))
	require.NoError(t, err)
	_, err = f.Write([]byte("BIEM garbage"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	check(1)

	// Close writes the current log's map: the next Open starts a new log.
	require.NoError(t, l.Close())
	l, err = Open("d", &Options{FS: fs, LogSizeLimit: 4096})
	require.NoError(t, err)
	defer l.Close()
	_, err = fs.Stat(filepath.Join("d", MetadataFileName(cur)))
	require.NoError(t, err)
	check(cur)
}

// TestRemoveLog checks that a removed log's reads fail with ErrBadLocation
// (which the bookie answers by looking the entry up again), that its map
// goes with it, and that the log being written cannot be removed.
func TestRemoveLog(t *testing.T) {
	fs := vfs.NewMem()
	l, err := Open("d", &Options{FS: fs, LogSizeLimit: 2048})
	require.NoError(t, err)
	defer l.Close()
	var locs []int64
	for i := int64(0); i < 10; i++ {
		loc, err := l.AddEntry(1, i, make([]byte, 500))
		require.NoError(t, err)
		locs = append(locs, loc)
	}
	require.NoError(t, l.Flush())
	_, err = l.ReadEntry(1, 0, locs[0])
	require.NoError(t, err)
	require.ErrorIs(t, l.RemoveLog(l.CurrentLogID()), ErrInvalidArgument)
	require.ErrorIs(t, l.RemoveLog(1000), ErrInvalidArgument)
	require.NoError(t, l.RemoveLog(LocationLogID(locs[0])))
	_, err = l.ReadEntry(1, 0, locs[0])
	require.ErrorIs(t, err, ErrBadLocation)
	_, err = fs.Stat(filepath.Join("d", MetadataFileName(LocationLogID(locs[0]))))
	require.Error(t, err)
	// Another log's map without its log is an orphan.
	last := LocationLogID(locs[len(locs)-1]) - 1
	for _, id := range []int64{last - 1, last} {
		_, err := l.Metadata(id) // persists the map
		require.NoError(t, err)
	}
	require.NoError(t, fs.Remove(l.LogPath(last)))
	require.NoError(t, l.RemoveOrphanMetadata())
	_, err = fs.Stat(filepath.Join("d", MetadataFileName(last)))
	require.Error(t, err)
	_, err = fs.Stat(filepath.Join("d", MetadataFileName(last-1)))
	require.NoError(t, err)
}

// TestMetadataDecodeErrors checks that each inconsistency is reported as
// corruption naming where it is.
func TestMetadataDecodeErrors(t *testing.T) {
	good := EncodeMetadata(&Metadata{LogID: 3, Size: HeaderSize + 200, Ledgers: []LedgerUsage{{1, 100}, {5, 100}}})
	m, err := DecodeMetadata(good)
	require.NoError(t, err)
	require.Equal(t, int64(200), m.RemainingBytes())
	for _, c := range []struct {
		name string
		mut  func(b []byte) []byte
		want string
	}{
		{"short", func(b []byte) []byte { return b[:10] }, "shorter"},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "bad magic"},
		{"crc", func(b []byte) []byte { b[30]++; return b }, "checksum"},
		{"truncated", func(b []byte) []byte { return b[:len(b)-16] }, "checksum"},
		{"not ascending", func(b []byte) []byte { return resealed(b, func(b []byte) { binary.BigEndian.PutUint64(b[44:], 1) }) }, "not ascending"},
		{"too many bytes", func(b []byte) []byte { return resealed(b, func(b []byte) { binary.BigEndian.PutUint64(b[36:], 1000) }) }, "out of range"},
		{"count", func(b []byte) []byte { return resealed(b, func(b []byte) { binary.BigEndian.PutUint32(b[24:], 3) }) }, "count 3"},
		{"version", func(b []byte) []byte { return resealed(b, func(b []byte) { binary.BigEndian.PutUint32(b[4:], 2) }) }, "unknown version"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeMetadata(c.mut(append([]byte(nil), good...)))
			require.ErrorIs(t, err, ErrCorruption)
			require.Contains(t, err.Error(), c.want)
		})
	}
}

// resealed applies mut to a copy of an encoded map and recomputes its CRC.
func resealed(b []byte, mut func([]byte)) []byte {
	b = append([]byte(nil), b...)
	mut(b)
	body := b[:len(b)-4]
	return binary.BigEndian.AppendUint32(body, crc32.Checksum(body, castagnoli))
}

// TestMetadataFormat pins the ledgers map's encoding (docs/format.md).
//
//	ledgers id=N size=S
//	L B          (one line per ledger)
func TestMetadataFormat(t *testing.T) {
	golden.Run(t, "testdata/ledgers_map_format", func(t *testing.T, c *golden.Case) string {
		if c.Cmd != "ledgers" {
			t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		}
		m := &Metadata{LogID: c.Int(t, "id", 0), Size: c.Int(t, "size", 0)}
		for _, line := range c.Lines() {
			f := strings.Fields(line)
			require.Len(t, f, 2)
			l, err := strconv.ParseInt(f[0], 0, 64)
			require.NoError(t, err)
			n, err := strconv.ParseInt(f[1], 0, 64)
			require.NoError(t, err)
			m.Ledgers = append(m.Ledgers, LedgerUsage{l, n})
		}
		b := EncodeMetadata(m)
		d := golden.NewDump(b)
		d.Bytes(4, "magic %q", d.Peek(4))
		d.Uint(4, binary.BigEndian, "version")
		d.Uint(8, binary.BigEndian, "log id")
		d.Uint(8, binary.BigEndian, "log size")
		n := d.Uint(4, binary.BigEndian, "count")
		for i := uint64(0); i < n; i++ {
			d.Uint(8, binary.BigEndian, "ledger id")
			d.Uint(8, binary.BigEndian, "bytes")
		}
		d.Uint(4, binary.BigEndian, "CRC-32C of everything above")
		got, err := DecodeMetadata(b)
		if err != nil {
			return d.String() + "\ndecoded: err " + err.Error()
		}
		return d.String() + "\n" + fmt.Sprintf("decoded: log %d, size %d, %d ledgers, %d bytes remaining", got.LogID, got.Size, len(got.Ledgers), got.RemainingBytes())
	})
}

// FuzzDecodeMetadata: DecodeMetadata never panics, fails only with
// ErrCorruption, and what it accepts encodes back to the same bytes.
func FuzzDecodeMetadata(f *testing.F) {
	f.Add(EncodeMetadata(&Metadata{LogID: 1, Size: HeaderSize}))
	f.Add(EncodeMetadata(&Metadata{LogID: 0x1f, Size: HeaderSize + 1000, Ledgers: []LedgerUsage{{0, 24}, {7, 500}, {1 << 62, 100}}}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := DecodeMetadata(b)
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("error not matching ErrCorruption: %v", err)
			}
			return
		}
		if got := EncodeMetadata(m); string(got) != string(b) {
			t.Fatalf("re-encoding differs:\n%x\n%x", got, b)
		}
	})
}

// TestMetadataMemoryCost measures what the garbage collector's metadata
// costs in memory (docs/design.md): 10^4 logs of 100 ledgers each, the
// Go heap before and after. Run with -v to see the figure.
func TestMetadataMemoryCost(t *testing.T) {
	const logs, perLog = 10000, 100
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	meta := make(map[int64]*Metadata, logs)
	for id := int64(0); id < logs; id++ {
		usage := make(map[int64]int64, perLog)
		for i := int64(0); i < perLog; i++ {
			usage[id*37+i*1000] = 1000
		}
		meta[id] = metadataFromUsage(id, HeaderSize+perLog*1000, usage)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perPair := float64(after.HeapAlloc-before.HeapAlloc) / (logs * perLog)
	t.Logf("%d logs x %d ledgers: %.1f MB, %.1f bytes per (log, ledger) pair", logs, perLog,
		float64(after.HeapAlloc-before.HeapAlloc)/1e6, perPair)
	require.Less(t, perPair, 24.0)
	runtime.KeepAlive(meta)
}
