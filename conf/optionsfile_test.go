package conf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseOptionsFileSyntax(t *testing.T) {
	text := "# header comment\n" +
		"[Version]\n" +
		"  rocksdb_version=9.9.3\n" +
		"\n" +
		"  [DBOptions]  \n" +
		" max_open_files = -1   # trailing comment\n" +
		"\twal_dir=\n" +
		"[CFOptions \"default\"]\r\n" +
		"compression_opts={enabled=false;level=32767;}\r\n" +
		"[TableOptions/BlockBasedTable\t\"default\"]\n" +
		"x=a\\#b # c\n" +
		"#last=1\n"
	sections, err := parseOptionsFile([]byte(text))
	require.NoError(t, err)
	require.Len(t, sections, 4)
	require.Equal(t, "[Version]", sections[0].title())
	require.Equal(t, []optionsEntry{{"rocksdb_version", "9.9.3", 3}}, sections[0].entries)
	require.Equal(t, "[DBOptions]", sections[1].title())
	require.Equal(t, 5, sections[1].line)
	require.Equal(t, []optionsEntry{{"max_open_files", "-1", 6}, {"wal_dir", "", 7}}, sections[1].entries)
	require.Equal(t, `[CFOptions "default"]`, sections[2].title())
	require.Equal(t, []optionsEntry{{"compression_opts", "{enabled=false;level=32767;}", 9}}, sections[2].entries)
	require.Equal(t, "TableOptions/BlockBasedTable", sections[3].name)
	require.Equal(t, "default", sections[3].arg)
	require.Equal(t, []optionsEntry{{"x", "a#b", 11}}, sections[3].entries)

	empty, err := parseOptionsFile([]byte("# nothing\n\n"))
	require.NoError(t, err)
	require.Empty(t, empty)
}

func TestParseOptionsFileErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{"a=1\n", `line 1: a=1 comes before any [section] header`},
		{"[DBOptions]\njust words\n", `line 2: "just words" is neither a [section] header nor key=value`},
		{"[DBOptions]\n=1\n", `line 2: "=1" is neither`},
		{"[DBOptions\n", `line 1: section header "[DBOptions" does not end with ']'`},
		{"[]\n", `line 1: section header "[]" has no name`},
		{"[CFOptions default]\n", `the argument must be one quoted word`},
		{"[CFOptions \"a\" \"b\"]\n", `the argument must be one quoted word`},
		{"[DBOptions]\n[DBOptions]\n", `line 2: section [DBOptions] appears twice (first at line 1)`},
		{"[DBOptions]\na=1\n\na=2\n", `line 4: [DBOptions] a is set twice (first at line 2)`},
	} {
		_, err := parseOptionsFile([]byte(tc.text))
		require.Error(t, err, tc.text)
		require.Contains(t, err.Error(), tc.want, tc.text)
	}
}
