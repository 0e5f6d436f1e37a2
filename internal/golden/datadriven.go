package golden

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// update and regenerate are flags of every test binary that uses this
// package.
var (
	update     = flag.Bool("update", false, "rewrite the expected output of golden testdata files")
	regenerate = flag.Bool("regenerate", false, "rewrite the committed version-1 fixture files (then run with -update and review the diff)")
)

// Regenerating reports whether -regenerate was given: tests whose fixtures
// are committed files (a table, a WAL, a MANIFEST, an entry log written by
// this version) rewrite them only then, so that an ordinary run always reads
// the files an older build wrote.
func Regenerating() bool { return *regenerate }

// separator ends a case's input and starts its expected output.
const separator = "----"

// Case is one case of a testdata file.
type Case struct {
	// Pos is "file:line" of the command, for messages.
	Pos string
	// Cmd is the command, the first word of the case.
	Cmd string
	// Args are the command's arguments in order.
	Args []Arg
	// Input is the lines between the command and the separator.
	Input string
	// Expected is the output recorded in the file.
	Expected string

	outStart, outEnd int // line indexes of the expected output: [start, end)
}

// Arg is a command argument: "key", "key=value" or "key=(v1,v2,...)".
type Arg struct {
	Key    string
	Values []string
}

// Has reports whether the case has argument key.
func (c *Case) Has(key string) bool {
	_, ok := c.arg(key)
	return ok
}

func (c *Case) arg(key string) (Arg, bool) {
	for _, a := range c.Args {
		if a.Key == key {
			return a, true
		}
	}
	return Arg{}, false
}

// String returns the single value of argument key, or def if it is absent.
func (c *Case) String(t testing.TB, key, def string) string {
	t.Helper()
	a, ok := c.arg(key)
	if !ok {
		return def
	}
	if len(a.Values) != 1 {
		t.Fatalf("%s: argument %s wants one value, has %d", c.Pos, key, len(a.Values))
	}
	return a.Values[0]
}

// Int returns argument key as an integer (decimal, or 0x hexadecimal), or
// def if it is absent.
func (c *Case) Int(t testing.TB, key string, def int64) int64 {
	t.Helper()
	s := c.String(t, key, "")
	if s == "" {
		return def
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		t.Fatalf("%s: argument %s=%s: %v", c.Pos, key, s, err)
	}
	return v
}

// Lines returns the input's lines, without empty ones.
func (c *Case) Lines() []string {
	var out []string
	for _, l := range strings.Split(c.Input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// Run runs every case of the testdata file at path through fn, comparing its
// result with the recorded output; with -update it rewrites the file with
// the results instead. An output may not contain an empty line (which would
// end the case when read back).
func Run(t *testing.T, path string, fn func(t *testing.T, c *Case) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	cases, err := parse(path, lines)
	if err != nil {
		t.Fatal(err)
	}
	outputs := make([]string, len(cases))
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s/%s", strings.TrimPrefix(c.Pos, path+":"), c.Cmd), func(t *testing.T) {
			got := strings.TrimRight(fn(t, c), "\n")
			if strings.Contains(got, "\n\n") || strings.HasPrefix(got, "\n") {
				t.Fatalf("%s: output contains an empty line:\n%s", c.Pos, got)
			}
			outputs[i] = got
			if !*update && got != c.Expected {
				t.Errorf("%s: %s: output differs (run with -update to rewrite, then review the diff)\n"+
					"--- expected\n%s\n--- got\n%s\n%s", c.Pos, c.Cmd, c.Expected, got, firstDifference(c.Expected, got))
			}
		})
	}
	if !*update {
		return
	}
	if t.Failed() {
		t.Logf("%s: not rewritten: a case failed", path)
		return
	}
	var b strings.Builder
	next := 0
	for i, c := range cases {
		for _, l := range lines[next:c.outStart] {
			b.WriteString(l + "\n")
		}
		if outputs[i] != "" {
			b.WriteString(outputs[i] + "\n")
		}
		next = c.outEnd
	}
	for _, l := range lines[next:] {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// firstDifference names the first line where want and got differ.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("first difference at output line %d:\n  expected: %s\n  got:      %s", i+1, wl, gl)
		}
	}
	return ""
}

// parse splits a testdata file into cases.
func parse(path string, lines []string) ([]*Case, error) {
	var cases []*Case
	for i := 0; i < len(lines); {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		c := &Case{Pos: fmt.Sprintf("%s:%d", path, i+1)}
		fields := strings.Fields(l)
		c.Cmd = fields[0]
		for _, f := range fields[1:] {
			a, err := parseArg(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", c.Pos, err)
			}
			c.Args = append(c.Args, a)
		}
		i++
		var input []string
		for i < len(lines) && lines[i] != separator {
			input = append(input, lines[i])
			i++
		}
		if i == len(lines) {
			return nil, fmt.Errorf("%s: case %s has no %q line", c.Pos, c.Cmd, separator)
		}
		c.Input = strings.Join(input, "\n")
		i++
		c.outStart = i
		for i < len(lines) && lines[i] != "" {
			i++
		}
		c.outEnd = i
		c.Expected = strings.Join(lines[c.outStart:c.outEnd], "\n")
		cases = append(cases, c)
	}
	return cases, nil
}

func parseArg(s string) (Arg, error) {
	key, val, ok := strings.Cut(s, "=")
	if !ok {
		return Arg{Key: s}, nil
	}
	if strings.HasPrefix(val, "(") {
		if !strings.HasSuffix(val, ")") {
			return Arg{}, fmt.Errorf("argument %s: unbalanced parentheses", s)
		}
		return Arg{Key: key, Values: strings.Split(val[1:len(val)-1], ",")}, nil
	}
	return Arg{Key: key, Values: []string{val}}, nil
}
