package bloom

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestBloomFormat pins the persisted hash and filter bits with golden files:
// a filter for fixed keys must keep the same bytes, or tables written before
// would answer "absent" for keys they hold. Rewrite with -update and review
// the diff.
//
//	hash                  <key>... → Hash(key)
//	build bits=N          <key>... → the filter, dumped line by line, and
//	                      which bits each line has set
//	query bits=N keys=(k,...)  <key>... → MayContain for each input key
//	                      against a filter of the keys argument
func TestBloomFormat(t *testing.T) {
	golden.Run(t, "testdata/bloom_format", func(t *testing.T, c *golden.Case) string {
		keys := func(ss []string) (hashes []uint64, names []string) {
			for _, s := range ss {
				k, err := golden.ParseBytes(s)
				require.NoError(t, err)
				hashes = append(hashes, Hash(k))
				names = append(names, s)
			}
			return hashes, names
		}
		switch c.Cmd {
		case "hash":
			hashes, names := keys(c.Lines())
			var lines []string
			for i, h := range hashes {
				lines = append(lines, fmt.Sprintf("%-24s %016x", names[i], h))
			}
			return strings.Join(lines, "\n")
		case "build":
			hashes, _ := keys(c.Lines())
			return dumpFilter(Build(nil, hashes, int(c.Int(t, "bits", 10))))
		case "query":
			var built []string
			for _, a := range c.Args {
				if a.Key == "keys" {
					built = a.Values
				}
			}
			inFilter, _ := keys(built)
			filter := Build(nil, inFilter, int(c.Int(t, "bits", 10)))
			hashes, names := keys(c.Lines())
			var lines []string
			for i, h := range hashes {
				lines = append(lines, fmt.Sprintf("%-24s %v", names[i], MayContain(filter, h)))
			}
			return strings.Join(lines, "\n")
		}
		t.Fatalf("%s: unknown command %s", c.Pos, c.Cmd)
		return ""
	})
}

// goldenLineBytes is a filter line's size as docs/format.md gives it.
const goldenLineBytes = 64

// dumpFilter annotates a filter: its lines (with the indexes of their set
// bits, bit i being bit i%8 of byte i/8) and its 5-byte trailer.
func dumpFilter(f []byte) string {
	if len(f) < 5 {
		return fmt.Sprintf("filter of %d bytes", len(f))
	}
	lines := int(binary.LittleEndian.Uint32(f[len(f)-4:]))
	d := golden.NewDump(f)
	for l := 0; l < lines && d.Remaining() >= goldenLineBytes+5; l++ {
		line := d.Peek(goldenLineBytes)
		var set []string
		for i := 0; i < 8*goldenLineBytes; i++ {
			if line[i/8]&(1<<(i%8)) != 0 {
				set = append(set, fmt.Sprint(i))
			}
		}
		d.Bytes(goldenLineBytes, "line %d", l)
		d.Note("line %d bits set: %s", l, strings.Join(set, " "))
	}
	d.Uint(1, binary.LittleEndian, "numProbes")
	d.Uint(4, binary.LittleEndian, "numLines")
	return d.String()
}
