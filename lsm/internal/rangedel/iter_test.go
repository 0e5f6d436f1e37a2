package rangedel

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/stretchr/testify/require"
)

// TestIterCases runs testdata/iter: iterator operations on fixed sets.
func TestIterCases(t *testing.T) {
	var s *Set
	golden.Run(t, "testdata/iter", func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "define":
			s = defineSet(t, c)
			return formatFragments(s.Fragments())
		case "iter":
			it := s.NewIter()
			var out strings.Builder
			for _, line := range c.Lines() {
				op, arg, _ := strings.Cut(line, " ")
				var key []byte
				if arg != "" {
					key = []byte(arg)
				}
				var f *Fragment
				switch op {
				case "current":
					f = it.Current()
				case "first":
					f = it.First()
				case "last":
					f = it.Last()
				case "next":
					f = it.Next()
				case "prev":
					f = it.Prev()
				case "seek-ge":
					f = it.SeekGE(key)
				case "seek-lt":
					f = it.SeekLT(key)
				default:
					t.Fatalf("%s: unknown operation %q", c.Pos, op)
				}
				got := "nil"
				if f != nil {
					got = formatFragments([]Fragment{*f})
				}
				fmt.Fprintf(&out, "%s: %s\n", line, got)
			}
			require.Equal(t, len(s.Fragments()), it.Len())
			return out.String()
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return ""
	})
}

// TestIterRandom drives an iterator with random operations and compares
// each position with a model that finds fragments by linear scans.
func TestIterRandom(t *testing.T) {
	rng := newRand(t)
	for round := 0; round < rounds(500, 50); round++ {
		s := BuildSet(randomTombstones(rng, 10))
		frags := s.Fragments()
		var it Iter
		it.Init(s)
		pos := -1 // the model's position, -1 .. len(frags)
		for op := 0; op < 100; op++ {
			key := randomKey(rng, 3)
			var got *Fragment
			var desc string
			switch rng.Intn(6) {
			case 0:
				desc = "SeekGE " + string(key)
				got = it.SeekGE(key)
				// The fragment containing key, else the first after it.
				pos = len(frags)
				for i := range frags {
					if frags[i].Contains(key) || bytes.Compare(frags[i].Start, key) > 0 {
						pos = i
						break
					}
				}
			case 1:
				desc = "SeekLT " + string(key)
				got = it.SeekLT(key)
				// The last fragment with a key below key in it.
				pos = -1
				for i := len(frags) - 1; i >= 0; i-- {
					if bytes.Compare(frags[i].Start, key) < 0 {
						pos = i
						break
					}
				}
			case 2:
				desc = "First"
				got = it.First()
				pos = 0
			case 3:
				desc = "Last"
				got = it.Last()
				pos = len(frags) - 1
			case 4:
				desc = "Next"
				got = it.Next()
				pos = min(pos+1, len(frags))
			case 5:
				desc = "Prev"
				got = it.Prev()
				pos = max(pos-1, -1)
			}
			if pos < 0 || pos >= len(frags) {
				require.Nil(t, got, "%s over %s", desc, fragmentList(frags))
			} else {
				require.Same(t, &frags[pos], got, "%s over %s", desc, fragmentList(frags))
			}
			require.Same(t, got, it.Current())
		}
	}
}
