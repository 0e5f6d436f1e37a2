package conf

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var long = flag.Bool("long", false, "run the randomized tests for longer")

// kv is the expected outcome of one property.
type kv struct{ key, value string }

func parsePairs(t *testing.T, text string) []kv {
	t.Helper()
	props, err := parseProperties([]byte(text))
	require.NoError(t, err)
	var out []kv
	for _, p := range props {
		out = append(out, kv{p.key, p.value})
	}
	return out
}

func TestPropertiesSyntax(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		want []kv
	}{
		{"equals", "a=1", []kv{{"a", "1"}}},
		{"colon", "a:1", []kv{{"a", "1"}}},
		{"blank separator", "a 1", []kv{{"a", "1"}}},
		{"blanks around separator", "a \t = \f 1", []kv{{"a", "1"}}},
		{"blanks then colon", "a   :1", []kv{{"a", "1"}}},
		{"only the first separator counts", "a==1", []kv{{"a", "=1"}}},
		{"colon in value", "a=http://x:1/", []kv{{"a", "http://x:1/"}}},
		{"empty value", "a=", []kv{{"a", ""}}},
		{"key alone", "a", []kv{{"a", ""}}},
		{"key alone with blanks", "  a   ", []kv{{"a", ""}}},
		{"leading blanks", "   \t a=1", []kv{{"a", "1"}}},
		{"trailing blanks dropped", "a=1  \t", []kv{{"a", "1"}}},
		{"escaped trailing blank kept", `a=1\ `, []kv{{"a", "1 "}}},
		{"inner blanks kept", "a=x  y", []kv{{"a", "x  y"}}},
		{"hash comment", "# c\na=1", []kv{{"a", "1"}}},
		{"bang comment", "! c\na=1", []kv{{"a", "1"}}},
		{"indented comment", "   # c=2\na=1", []kv{{"a", "1"}}},
		{"hash inside value", "a=1 # not a comment", []kv{{"a", "1 # not a comment"}}},
		{"comment not continued", "# c \\\na=1", []kv{{"a", "1"}}},
		{"blank lines", "\n\n  \n\t\na=1\n\n", []kv{{"a", "1"}}},
		{"continuation", "a=1,\\\n    2,\\\n  3", []kv{{"a", "1,2,3"}}},
		{"continuation keeps inner blanks", "a=x \\\n  y", []kv{{"a", "x y"}}},
		{"continuation line looking like a comment", "a=1\\\n# 2", []kv{{"a", "1# 2"}}},
		{"continuation of key", "ke\\\n  y=1", []kv{{"key", "1"}}},
		{"continuation at end of file", "a=1\\", []kv{{"a", "1"}}},
		{"continuation onto blank line", "a=1\\\n\nb=2", []kv{{"a", "1"}, {"b", "2"}}},
		{"even backslashes do not continue", "a=1\\\\\nb=2", []kv{{"a", `1\`}, {"b", "2"}}},
		{"CRLF", "a=1\r\nb=2\r\n", []kv{{"a", "1"}, {"b", "2"}}},
		{"CR", "a=1\rb=2", []kv{{"a", "1"}, {"b", "2"}}},
		{"CRLF continuation", "a=1\\\r\n  2", []kv{{"a", "12"}}},
		{"escapes", `a=\t\n\r\f\\\=\:\#\!\ x\q`, []kv{{"a", "\t\n\r\f\\=:#! xq"}}},
		{"escaped separators in key", `k\=e\:y\ z=1`, []kv{{"k=e:y z", "1"}}},
		{"unicode escape", `a=\u0041\u00e9\u20AC`, []kv{{"a", "Aé€"}}},
		{"surrogate pair", `a=\uD83D\uDE00`, []kv{{"a", "😀"}}},
		{"lone surrogate", `a=\uD83Dx`, []kv{{"a", "\uFFFDx"}}},
		{"UTF-8 text", "ключ=значение", []kv{{"ключ", "значение"}}},
		{"duplicates kept in order", "a=1\na=2", []kv{{"a", "1"}, {"a", "2"}}},
		{"empty file", "", nil},
		{"only comments", "# a=1\n! b=2\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, parsePairs(t, tc.text))
		})
	}
}

func TestPropertiesLineNumbers(t *testing.T) {
	props, err := parseProperties([]byte("# c\n\na=1\\\n  2\nb=3\r\nc=4"))
	require.NoError(t, err)
	require.Len(t, props, 3)
	require.Equal(t, 3, props[0].line)
	require.Equal(t, 5, props[1].line)
	require.Equal(t, 6, props[2].line)
}

func TestPropertiesMalformedUnicodeEscape(t *testing.T) {
	for _, text := range []string{`a=\u12`, `a=\u12G4`, `a=\u`, "x=1\n" + `\uZZZZ=1`} {
		_, err := parseProperties([]byte(text))
		require.Error(t, err, text)
		require.Contains(t, err.Error(), `\uXXXX`)
		require.Contains(t, err.Error(), "line")
	}
	_, err := parseProperties([]byte("x=1\nb=\\u12"))
	require.ErrorContains(t, err, "line 2")
}

// writeProperty renders a key and value the way an author might, choosing
// at random among the equivalent spellings the format allows, so that
// parsing must give back exactly the key and value.
func writeProperty(rng *rand.Rand, key, value string) string {
	var b strings.Builder
	b.WriteString([]string{"", " ", "\t", "  "}[rng.Intn(4)])
	b.WriteString(escapeForProperties(rng, key, true))
	b.WriteString([]string{"=", ":", " = ", " : ", "\t=\t", " "}[rng.Intn(6)])
	if value != "" && value[0] != ' ' && value[0] != '=' && value[0] != ':' && rng.Intn(3) == 0 {
		b.WriteString("  ") // extra blanks before a value are skipped
	}
	b.WriteString(escapeForProperties(rng, value, false))
	if rng.Intn(3) == 0 {
		b.WriteString(" \t") // unescaped trailing blanks are dropped
	}
	return b.String()
}

// escapeForProperties escapes what must be escaped and, at random, some of
// what may be, and breaks long text with continuation lines.
func escapeForProperties(rng *rand.Rand, s string, isKey bool) string {
	var b strings.Builder
	for i, r := range s {
		continued := false
		if i > 0 && rng.Intn(12) == 0 {
			b.WriteString("\\\n" + []string{"", "  ", "\t"}[rng.Intn(3)])
			continued = true
		}
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == ' ' && (isKey || continued || i == 0 || i == len(s)-1):
			b.WriteString(`\ `)
		case (r == '=' || r == ':') && (isKey || i == 0):
			b.WriteString(`\` + string(r))
		case (r == '#' || r == '!') && isKey && i == 0:
			b.WriteString(`\` + string(r))
		case r > 127 && rng.Intn(2) == 0 && r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r != 'u' && r != 't' && r != 'n' && r != 'r' && r != 'f' && r < 128 && rng.Intn(10) == 0:
			b.WriteString(`\` + string(r)) // a needless escape stands for the character
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func randomPropertyText(rng *rand.Rand, n int, allowEmpty bool) string {
	alphabet := []rune("abcXYZ019_.-=: #!\\\t\néü€/,")
	if n == 0 && !allowEmpty {
		n = 1
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteRune(alphabet[rng.Intn(len(alphabet))])
	}
	return b.String()
}

// TestPropertiesRandomRoundTrip writes random keys and values with random
// spellings, comments and blank lines, and checks that parsing returns
// them (the model: the list of pairs written).
func TestPropertiesRandomRoundTrip(t *testing.T) {
	iterations := 300
	if *long {
		iterations = 30000
	}
	rng := rand.New(rand.NewSource(1))
	for it := 0; it < iterations; it++ {
		var want []kv
		var file strings.Builder
		for n := rng.Intn(8); n > 0; n-- {
			switch rng.Intn(4) {
			case 0:
				file.WriteString([]string{"# ", "!", "  #"}[rng.Intn(3)] + strings.NewReplacer("\n", " ", "\\", "/").Replace(randomPropertyText(rng, rng.Intn(10), true)))
			case 1:
				file.WriteString([]string{"", "  ", "\t"}[rng.Intn(3)])
			default:
				key := randomPropertyText(rng, rng.Intn(8), false)
				value := randomPropertyText(rng, rng.Intn(12), true)
				value = strings.TrimRight(value, " \t") // unescaped or not, written trailing blanks are escaped; keep the model simple
				want = append(want, kv{key, value})
				file.WriteString(writeProperty(rng, key, value))
			}
			file.WriteString([]string{"\n", "\r\n", "\r"}[rng.Intn(3)])
		}
		props, err := parseProperties([]byte(file.String()))
		require.NoError(t, err, "file %q", file.String())
		var got []kv
		for _, p := range props {
			got = append(got, kv{p.key, p.value})
		}
		require.Equal(t, want, got, "iteration %d, file %q", it, file.String())
	}
}
