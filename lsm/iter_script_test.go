package lsm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bookie-index/bookie-index/internal/golden"
	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// runDBScript runs a testdata script of DB operations and reads (Pebble
// drives its iterators from such scripts):
//
//	open [merge=append|max]     a new DB on a MemFS (smallOptions)
//	batch                       one batch, applied: a line each of
//	                            set K V, del K, merge K V, del-range A B
//	flush | compact | reopen    a flush, a full compaction, a clean reopen
//	get                         a line each of K: prints K=V or K: not found
//	scan [reverse] [lower=K] [upper=K]
//	                            every key=value, forward or backward
//	iter [lower=K] [upper=K]    a line each of first, last, next, prev,
//	                            seek-ge K, seek-lt K: prints where each
//	                            lands (op: K=V), or "." when not positioned
//
// Keys and values are golden.ParseBytes text.
func runDBScript(t *testing.T, path string) {
	var fs FS
	var d *DB
	var opts *Options
	t.Cleanup(func() {
		if d != nil {
			_ = d.Close()
		}
	})
	golden.Run(t, path, func(t *testing.T, c *golden.Case) string {
		switch c.Cmd {
		case "open":
			if d != nil {
				require.NoError(t, d.Close())
			}
			fs = NewMemFS()
			opts = smallOptions(fs)
			switch name := c.String(t, "merge", ""); name {
			case "":
			case "append":
				opts.MergeOperator = appendMerge{}
			case "max":
				opts.MergeOperator = maxMerge{}
			default:
				t.Fatalf("%s: unknown merge operator %q", c.Pos, name)
			}
			var err error
			d, err = Open("db", opts)
			require.NoError(t, err)
			return ""
		case "batch":
			var b Batch
			for _, line := range c.Lines() {
				f := scriptWords(t, c, line)
				switch op := string(f[0]); {
				case op == "set" && len(f) == 3:
					b.Set(f[1], f[2])
				case op == "del" && len(f) == 2:
					b.Delete(f[1])
				case op == "merge" && len(f) == 3:
					b.Merge(f[1], f[2])
				case op == "del-range" && len(f) == 3:
					b.DeleteRange(f[1], f[2])
				default:
					t.Fatalf("%s: bad batch operation %q", c.Pos, line)
				}
			}
			require.NoError(t, d.Apply(&b, NoSync), c.Pos)
			return ""
		case "flush":
			require.NoError(t, d.Flush(), c.Pos)
			return ""
		case "compact":
			require.NoError(t, d.Compact(context.Background(), nil, nil), c.Pos)
			return ""
		case "reopen":
			require.NoError(t, d.Close(), c.Pos)
			var err error
			d, err = Open("db", opts)
			require.NoError(t, err, c.Pos)
			return ""
		case "get":
			var out strings.Builder
			for _, line := range c.Lines() {
				k := scriptWords(t, c, line)[0]
				v, err := d.Get(k)
				switch {
				case errors.Is(err, ErrNotFound):
					fmt.Fprintf(&out, "%s: not found\n", k)
				case err != nil:
					fmt.Fprintf(&out, "%s: error: %v\n", k, err)
				default:
					fmt.Fprintf(&out, "%s=%s\n", k, v)
				}
			}
			return out.String()
		case "scan":
			return strings.Join(scan(t, d, scriptIterOptions(t, c), c.Has("reverse")), "\n")
		case "iter":
			it, err := d.NewIter(scriptIterOptions(t, c))
			require.NoError(t, err)
			var out strings.Builder
			for _, line := range c.Lines() {
				f := scriptWords(t, c, line)
				var ok bool
				switch op := string(f[0]); {
				case op == "first":
					ok = it.First()
				case op == "last":
					ok = it.Last()
				case op == "next":
					ok = it.Next()
				case op == "prev":
					ok = it.Prev()
				case op == "seek-ge" && len(f) == 2:
					ok = it.SeekGE(f[1])
				case op == "seek-lt" && len(f) == 2:
					ok = it.SeekLT(f[1])
				default:
					t.Fatalf("%s: bad iterator operation %q", c.Pos, line)
				}
				require.Equal(t, ok, it.Valid(), "%s: %s", c.Pos, line)
				if !ok {
					require.NoError(t, it.Error(), "%s: %s", c.Pos, line)
					fmt.Fprintf(&out, "%s: .\n", line)
					continue
				}
				fmt.Fprintf(&out, "%s: %s=%s\n", line, it.Key(), it.Value())
			}
			require.NoError(t, it.Close())
			return out.String()
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return ""
	})
}

// scriptWords splits a script line into words, each read as bytes.
func scriptWords(t *testing.T, c *golden.Case, line string) [][]byte {
	var out [][]byte
	for _, w := range strings.Fields(line) {
		b, err := golden.ParseBytes(w)
		if err != nil {
			t.Fatalf("%s: %q: %v", c.Pos, line, err)
		}
		out = append(out, b)
	}
	return out
}

// scriptIterOptions reads a case's lower= and upper= bounds.
func scriptIterOptions(t *testing.T, c *golden.Case) *IterOptions {
	o := &IterOptions{}
	for _, b := range []struct {
		name string
		dst  *[]byte
	}{{"lower", &o.LowerBound}, {"upper", &o.UpperBound}} {
		if c.Has(b.name) {
			v, err := golden.ParseBytes(c.String(t, b.name, ""))
			require.NoError(t, err, c.Pos)
			*b.dst = v
		}
	}
	return o
}
