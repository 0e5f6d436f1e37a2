package sstable

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/bookie-index/bookie-index/lsm/internal/block"
	"github.com/stretchr/testify/require"
)

// TestSeparatorRandomized checks a <= s < b for random pairs drawn from a
// small alphabet (so that shared prefixes, 0xff runs and prefixes of each
// other are common), and that s is b's shortest distinguishing prefix
// whenever b is longer than that.
func TestSeparatorRandomized(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	alphabet := []byte{0x00, 0x01, 0x7f, 0xfe, 0xff}
	randKey := func() []byte {
		k := make([]byte, rng.Intn(10))
		for i := range k {
			k[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return k
	}
	for n := 0; n < 200000; n++ {
		a, b := randKey(), randKey()
		switch c := bytes.Compare(a, b); {
		case c == 0:
			continue
		case c > 0:
			a, b = b, a
		}
		s := appendSeparator([]byte("dst:"), a, b)
		require.Equal(t, "dst:", string(s[:4]))
		s = s[4:]
		require.True(t, bytes.Compare(a, s) <= 0 && bytes.Compare(s, b) < 0, "a=%x b=%x s=%x", a, b, s)
		require.LessOrEqual(t, len(s), max(len(a), len(b)), "a=%x b=%x s=%x", a, b, s)
		if i := block.SharedPrefixLen(a, b); i < len(a) && i+1 < len(b) {
			require.Equal(t, b[:i+1], s, "a=%x b=%x", a, b)
		}
	}
}

func TestSeparatorBetweenLedgers(t *testing.T) {
	for _, c := range []struct {
		a, b []byte
		want []byte
	}{
		// A ledger boundary: the separator is the next ledger id, 8 bytes,
		// above every entry of the lower ledger.
		{entryKey(7, 4999), entryKey(8, 0), entryKey(8, 0)[:8]},
		{entryKey(255, 10), entryKey(256, 0), entryKey(256, 0)[:7]},
		// Inside a ledger, differing only in the last byte: b cannot be
		// cut, a is the separator.
		{entryKey(7, 1234), entryKey(7, 1235), entryKey(7, 1234)},
		// Inside a ledger across a byte carry: b's prefix.
		{entryKey(7, 0x12ff), entryKey(7, 0x1300), entryKey(7, 0x1300)[:15]},
		// a is a prefix of b.
		{[]byte("led"), []byte("ledger"), []byte("led")},
		// b ends at the first difference: increment a.
		{[]byte("a"), []byte("c"), []byte("b")},
		{[]byte("ab\xff\x01"), []byte("ac"), []byte("ab\xff\x02")},
	} {
		require.Equal(t, c.want, appendSeparator(nil, c.a, c.b), "a=%x b=%x", c.a, c.b)
	}
}

// TestFloorReadsOneDataBlock: the last entry of a ledger, found with a
// reverse seek bounded to the ledger, reads one data block — the ledger's
// last — not also the next ledger's first block. Blocks are cut at ledger
// boundaries, so this depends on separators taken from above.
func TestFloorReadsOneDataBlock(t *testing.T) {
	fs, dir := tempFS(t)
	const ledgers, entries = 40, 1500
	for _, layout := range []Layout{LayoutPartitioned, LayoutFull} {
		path := filepath.Join(dir, layout.String()+".sst")
		writeTable(t, fs, path, WriterOptions{BlockSize: 2048, MetadataBlockSize: 256, Layout: layout}, entryLocationKVs(ledgers, entries), nil)
		r := openTable(t, fs, path, nil) // no cache: every data block access is a read
		for l := uint64(0); l < ledgers; l++ {
			var stats Stats
			upper := entryKey(l, math.MaxInt64)
			it := r.NewIter(IterOptions{LowerBound: entryKey(l, 0), UpperBound: upper, Stats: &stats})
			require.True(t, it.Last(), "%s ledger %d", layout, l)
			require.Equal(t, entries-1, int(binary.BigEndian.Uint64(it.UserKey()[8:])))
			require.NoError(t, it.Close())
			require.Equal(t, int64(1), stats.DataReads, "%s ledger %d", layout, l)
		}
		require.NoError(t, r.Close())
	}
}
