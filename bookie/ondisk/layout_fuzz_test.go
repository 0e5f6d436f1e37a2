package ondisk

import (
	"bytes"
	"testing"
)

// FuzzDecodeLayout: any bytes decode to a layout or an error, never a
// panic, and a decoded layout encodes back to the same bytes.
func FuzzDecodeLayout(f *testing.F) {
	f.Add(EncodeLayout(&Layout{Generation: 1, Dirs: []DirPair{{"/a", "/a"}}}))
	f.Add(EncodeLayout(&Layout{Generation: 7, Routing: RouteRecorded, Dirs: []DirPair{{"/a", "/x"}, {"/b", "/y"}}}))
	f.Add(EncodeLayout(&Layout{Generation: 3, Dirs: []DirPair{{"/a", "/x"}, {"/b", "/b"}}, Self: Identity{Position: 0, Role: RoleIndex}}))
	f.Add([]byte(layoutMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := DecodeLayout(data)
		if err != nil {
			return
		}
		if again := EncodeLayout(l); !bytes.Equal(again, data) {
			t.Fatalf("round trip changed the bytes:\n%x\n%x", data, again)
		}
	})
}
