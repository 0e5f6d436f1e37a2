package conf

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cockroachdb/errors"
)

// property is one key=value pair of a properties file and the line its
// logical line starts on (1-based).
type property struct {
	key   string
	value string
	line  int
}

// parseProperties parses the Java properties format bk_server.conf is
// written in (java.util.Properties.load, as Apache Commons Configuration
// reads it for BookKeeper):
//
//   - Natural lines end with \n, \r\n or \r. A line whose first
//     non-blank character is '#' or '!' is a comment; a blank line is
//     skipped. Comments are never continued.
//   - A line ending in an odd number of backslashes continues on the next
//     line; the backslash, the line break and the next line's leading
//     blanks are dropped.
//   - The key runs to the first unescaped '=', ':' or blank. Blanks, then
//     at most one '=' or ':', then blanks separate it from the value.
//     "key" alone has the empty value.
//   - Escapes, in keys and values: \t \n \r \f, \uXXXX (UTF-16, surrogate
//     pairs combine), and a backslash before any other character stands
//     for that character (\= \: \# \! \  \\).
//   - Unlike java.util.Properties, and like Commons Configuration, trailing
//     unescaped blanks of a value are dropped, so "port=8080 " is 8080.
//   - A '#' after a value is part of the value: there are no end-of-line
//     comments (Java does not have them either).
//
// The file is read as UTF-8 (Java reads ISO-8859-1; BookKeeper's files are
// ASCII). No ${...} interpolation and no include directive. Errors name the
// line.
func parseProperties(data []byte) ([]property, error) {
	lines := splitNaturalLines(string(data))
	var props []property
	for i := 0; i < len(lines); i++ {
		startLine := i + 1
		line := trimLeadingBlanks(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		// Join continuation lines into one logical line.
		var logical strings.Builder
		for {
			if !endsWithContinuation(line) {
				logical.WriteString(line)
				break
			}
			logical.WriteString(line[:len(line)-1])
			if i+1 >= len(lines) {
				break // a continuation at the end of the file continues onto nothing
			}
			i++
			line = trimLeadingBlanks(lines[i])
		}
		p, err := parsePropertyLine(logical.String())
		if err != nil {
			return nil, errors.Wrapf(err, "line %d", startLine)
		}
		p.line = startLine
		props = append(props, p)
	}
	return props, nil
}

// splitNaturalLines splits s at \n, \r\n and \r.
func splitNaturalLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			lines = append(lines, s[start:i])
			start = i + 1
		case '\r':
			lines = append(lines, s[start:i])
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			start = i + 1
		}
	}
	if start < len(s) {
		lines = append(lines, s[start:])
	}
	return lines
}

// isBlank reports the characters the format treats as white space.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingBlanks(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

// endsWithContinuation reports whether s ends with an odd number of
// backslashes (an even number are escaped backslashes).
func endsWithContinuation(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// parsePropertyLine splits a logical line (leading blanks removed) into its
// unescaped key and value.
func parsePropertyLine(line string) (property, error) {
	// The key ends at the first unescaped separator or blank.
	keyEnd := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // skip the escaped character
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			keyEnd = i
			break
		}
	}
	rest := trimLeadingBlanks(line[keyEnd:])
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeadingBlanks(rest[1:])
	}
	key, err := unescapeProperty(line[:keyEnd], false)
	if err != nil {
		return property{}, errors.Wrapf(err, "key %q", line[:keyEnd])
	}
	value, err := unescapeProperty(rest, true)
	if err != nil {
		return property{}, errors.Wrapf(err, "value of %s", key)
	}
	return property{key: key, value: value}, nil
}

// unescapeProperty resolves the escapes of a key or value. With
// trimTrailing, trailing blanks that were not escaped are dropped.
func unescapeProperty(s string, trimTrailing bool) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		if trimTrailing {
			s = strings.TrimRight(s, " \t\f")
		}
		return s, nil
	}
	var b strings.Builder
	keep := 0 // length of b up to its last non-blank or escaped character
	var pendingHigh rune = -1
	flushHigh := func() {
		if pendingHigh >= 0 {
			b.WriteRune(utf8.RuneError) // an unpaired surrogate
			pendingHigh = -1
			keep = b.Len()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			flushHigh()
			b.WriteByte(c)
			if !isBlank(c) {
				keep = b.Len()
			}
			continue
		}
		if i+1 >= len(s) {
			break // a lone trailing backslash stands for nothing
		}
		i++
		switch e := s[i]; e {
		case 'u':
			end := min(i+5, len(s))
			r, ok := parseHex4(s[i+1 : end])
			if !ok {
				return "", errors.Newf("malformed \\uXXXX escape %q: needs 4 hex digits", s[i-1:end])
			}
			i += 4
			switch {
			case utf16.IsSurrogate(r) && r < 0xDC00: // high surrogate
				flushHigh()
				pendingHigh = r
				continue
			case utf16.IsSurrogate(r): // low surrogate
				if pendingHigh >= 0 {
					b.WriteRune(utf16.DecodeRune(pendingHigh, r))
					pendingHigh = -1
				} else {
					b.WriteRune(utf8.RuneError)
				}
			default:
				flushHigh()
				b.WriteRune(r)
			}
		case 't':
			flushHigh()
			b.WriteByte('\t')
		case 'n':
			flushHigh()
			b.WriteByte('\n')
		case 'r':
			flushHigh()
			b.WriteByte('\r')
		case 'f':
			flushHigh()
			b.WriteByte('\f')
		default:
			flushHigh()
			b.WriteByte(e)
		}
		keep = b.Len()
	}
	flushHigh()
	out := b.String()
	if trimTrailing {
		out = out[:keep]
	}
	return out, nil
}

// parseHex4 parses exactly four hex digits.
func parseHex4(s string) (rune, bool) {
	if len(s) != 4 {
		return 0, false
	}
	var r rune
	for i := 0; i < 4; i++ {
		c := s[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
