package entrylocation

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestKeyFormat pins the entry location index's persisted keys and values
// (docs/format.md, "Keys") with golden files. Rewrite with -update and
// review the diff.
//
//	key <ledger id> <entry id>...   (one pair a line)
//	location <location>...          (one a line)
func TestKeyFormat(t *testing.T) {
	golden.Run(t, "testdata/key_format", func(t *testing.T, c *golden.Case) string {
		var out []string
		for _, l := range c.Lines() {
			f := strings.Fields(l)
			nums := make([]int64, len(f))
			for i, s := range f {
				var err error
				nums[i], err = strconv.ParseInt(s, 0, 64)
				require.NoError(t, err, "%s: %q", c.Pos, l)
			}
			switch {
			case c.Cmd == "key" && len(nums) == 2:
				k := EncodeKey(nums[0], nums[1])
				d := golden.NewDump(k[:])
				d.Uint(8, binary.BigEndian, "ledger id (BE)")
				d.Uint(8, binary.BigEndian, "entry id (BE)")
				id, err := decodeEntryID(k[:])
				require.NoError(t, err)
				out = append(out, fmt.Sprintf("# key(%s)", l), d.String(), fmt.Sprintf("# decoded entry id %d", id))
			case c.Cmd == "location" && len(nums) == 1:
				v := EncodeLocation(nums[0])
				d := golden.NewDump(v[:])
				d.Uint(4, binary.BigEndian, "entry log id")
				d.Uint(4, binary.BigEndian, "offset")
				loc, err := decodeLocation(v[:])
				require.NoError(t, err)
				out = append(out, fmt.Sprintf("# location(%s)", l), d.String(), fmt.Sprintf("# decoded %d", loc))
			default:
				t.Fatalf("%s: bad line %q for %s", c.Pos, l, c.Cmd)
			}
		}
		return strings.Join(out, "\n")
	})
}
