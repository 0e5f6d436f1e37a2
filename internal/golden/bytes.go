package golden

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// ParseBytes reads a key or value written in a testdata file:
//
//	0x0a0b       hexadecimal bytes
//	be64:7:1     big-endian uint64s, concatenated (entry-location keys and values)
//	""           the empty string
//	anything     the text itself
func ParseBytes(s string) ([]byte, error) {
	switch {
	case s == `""`:
		return []byte{}, nil
	case strings.HasPrefix(s, "0x"):
		b, err := hex.DecodeString(s[2:])
		if err != nil {
			return nil, fmt.Errorf("bad hex %q: %v", s, err)
		}
		return b, nil
	case strings.HasPrefix(s, "be64:"):
		var b []byte
		for _, f := range strings.Split(s[len("be64:"):], ":") {
			v, err := strconv.ParseUint(f, 0, 64)
			if err != nil {
				return nil, fmt.Errorf("bad be64 %q: %v", s, err)
			}
			b = binary.BigEndian.AppendUint64(b, v)
		}
		return b, nil
	}
	return []byte(s), nil
}
