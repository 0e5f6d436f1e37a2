package crc

import (
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMaskRoundTrip(t *testing.T) {
	for _, c := range []uint32{0, 1, 0xdeadbeef, 0xffffffff} {
		require.Equal(t, c, Unmask(Mask(c)))
		require.NotEqual(t, c, Mask(c))
	}
}

func TestValue(t *testing.T) {
	// The CRC-32C check value of "123456789" is 0xe3069283.
	require.Equal(t, uint32(0xe3069283), crc32.Checksum([]byte("123456789"), table))
	require.Equal(t, Mask(0xe3069283), Value([]byte("123456789")))
	require.Equal(t, Value([]byte("hello world")), Mask(Extend(Extend(0, []byte("hello ")), []byte("world"))))
}
