package golden

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCases(t *testing.T) {
	lines := strings.Split("# comment\n\ncmd a b=1 c=(x,y)\nin 1\nin 2\n----\nout 1\nout 2\n\nnext\n----\n", "\n")
	cases, err := parse("f", lines)
	require.NoError(t, err)
	require.Len(t, cases, 2)
	c := cases[0]
	require.Equal(t, "f:3", c.Pos)
	require.Equal(t, "cmd", c.Cmd)
	require.Equal(t, []Arg{{Key: "a"}, {Key: "b", Values: []string{"1"}}, {Key: "c", Values: []string{"x", "y"}}}, c.Args)
	require.Equal(t, "in 1\nin 2", c.Input)
	require.Equal(t, "out 1\nout 2", c.Expected)
	require.Equal(t, int64(1), c.Int(t, "b", 0))
	require.True(t, c.Has("a"))
	require.Equal(t, "", cases[1].Expected)

	_, err = parse("f", []string{"cmd", "no separator"})
	require.Error(t, err)
}

// TestRunRewrites checks that the file Run rewrites reads back to the same
// cases with the new outputs, comments kept.
func TestRunRewrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases")
	require.NoError(t, os.WriteFile(path, []byte("# c\nupper\nab\n----\nstale\nstale\n\nupper\ncd\n----\n"), 0o644))
	*update = true
	defer func() { *update = false }()
	upper := func(t *testing.T, c *Case) string { return strings.ToUpper(c.Input) }
	Run(t, path, upper)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "# c\nupper\nab\n----\nAB\n\nupper\ncd\n----\nCD\n", string(data))
	*update = false
	Run(t, path, upper)
}

func TestDump(t *testing.T) {
	b := binary.AppendUvarint([]byte{7}, 300)
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = append(b, make([]byte, 20)...)
	b = append(b, 1, 2)
	d := NewDump(b)
	d.Note("heading")
	d.Uint(1, binary.LittleEndian, "byte")
	d.Uvarint("n")
	d.Uint(4, binary.LittleEndian, "word")
	d.Bytes(20, "zeros")
	d.Bytes(4, "past the end")
	want := "# heading\n" +
		"     0  07                                               byte=7\n" +
		"     1  ac 02                                            n=300\n" +
		"     3  ef be ad de                                      word=3735928559 (0xdeadbeef)\n" +
		"     7  00 × 20                                          zeros\n" +
		"    27  !! past the end: 4 bytes wanted, 2 left"
	require.Equal(t, want, d.String())

	d = NewDump(make([]byte, 3))
	d.Bytes(1, "one")
	require.Contains(t, d.String(), "2 bytes not dumped")
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string][]byte{
		`""`:         {},
		"0x0aff":     {0x0a, 0xff},
		"be64:1":     {0, 0, 0, 0, 0, 0, 0, 1},
		"abc":        []byte("abc"),
		"be64:0x2:3": append([]byte{0, 0, 0, 0, 0, 0, 0, 2}, 0, 0, 0, 0, 0, 0, 0, 3),
	} {
		got, err := ParseBytes(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseBytes("0xz")
	require.Error(t, err)
}
