package bookie

import (
	"bytes"
	"testing"
)

// FuzzDecodeLayout: any bytes decode to a layout or an error, never a
// panic, and a decoded layout encodes back to the same bytes.
func FuzzDecodeLayout(f *testing.F) {
	f.Add(encodeLayout(&layout{generation: 1, dirs: []dirPair{{"/a", "/a"}}}))
	f.Add(encodeLayout(&layout{generation: 7, routing: routeRecorded, dirs: []dirPair{{"/a", "/x"}, {"/b", "/y"}}}))
	f.Add([]byte(layoutMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := decodeLayout(data)
		if err != nil {
			return
		}
		if again := encodeLayout(l); !bytes.Equal(again, data) {
			t.Fatalf("round trip changed the bytes:\n%x\n%x", data, again)
		}
	})
}
