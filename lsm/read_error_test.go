package lsm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// fileOffset is what an error naming the place of its failure implements
// (the service's log limits repeats by it).
type fileOffset interface {
	FileOffset() (string, int64)
}

// TestReadErrorsNameTheBlock: a read of a damaged block fails with an
// error that names the table file and the block's offset, as text and as
// FileOffset, matches ErrCorruption, and is the same place for every key
// of the block; a table that does not open names the file as a whole.
func TestReadErrorsNameTheBlock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frac   float64
		offset func(off int64) bool
	}{
		{"data block", 0.3, func(off int64) bool { return off >= 0 }},
		{"footer", 0.9999, func(off int64) bool { return off == -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			d, err := Open("db", smallOptions(fs))
			require.NoError(t, err)
			writeBatches(t, d, 300)
			require.NoError(t, d.Flush())
			require.NoError(t, d.Close())
			tables := filesOf(t, fs, ".sst")
			require.Len(t, tables, 1)
			flipByte(t, fs, tables[0], tc.frac)
			d, err = Open("db", smallOptions(fs))
			require.NoError(t, err)
			defer d.Close()

			places := map[string]int{}
			for i := 0; i < 300; i++ {
				_, err := d.Get([]byte(fmt.Sprintf("key%05d", i)))
				if err == nil {
					continue
				}
				require.True(t, errors.Is(err, ErrCorruption), "%v", err)
				var fo fileOffset
				require.True(t, errors.As(err, &fo), "%v", err)
				file, off := fo.FileOffset()
				require.Equal(t, tables[0], file)
				require.True(t, tc.offset(off), "offset %d", off)
				require.Contains(t, err.Error(), tables[0])
				if off >= 0 {
					require.Contains(t, err.Error(), fmt.Sprintf("block at offset %d", off))
				}
				require.NotContains(t, err.Error(), "\n")
				places[fmt.Sprintf("%s@%d", file, off)]++
			}
			require.NotEmpty(t, places)
			require.Len(t, places, 1, "one damaged place: %v", places)
			for _, n := range places {
				require.Greater(t, n, 1, "several keys fail at the same place")
			}
			// %+v still has the details, for debug logs.
			_, err = d.Get([]byte("key00150"))
			if err != nil {
				require.True(t, strings.Contains(fmt.Sprintf("%+v", err), "stack trace"))
			}
		})
	}
}
