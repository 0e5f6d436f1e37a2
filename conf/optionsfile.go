package conf

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/errors"
)

// optionsSection is one section of a RocksDB OPTIONS file:
//
//	[DBOptions]
//	[CFOptions "default"]
//	[TableOptions/BlockBasedTable "default"]
//
// name is the part before the quoted argument, arg the argument.
type optionsSection struct {
	name    string
	arg     string
	hasArg  bool
	line    int
	entries []optionsEntry
}

// optionsEntry is one key=value line of a section.
type optionsEntry struct {
	key   string
	value string
	line  int
}

// title is the section header as written: [name "arg"].
func (s *optionsSection) title() string {
	if s.hasArg {
		return "[" + s.name + " \"" + s.arg + "\"]"
	}
	return "[" + s.name + "]"
}

// parseOptionsFile splits a RocksDB OPTIONS file (the ini dialect
// rocksdb::RocksDBOptionsParser reads) into sections and entries:
//
//   - '#' starts a comment, at the start of a line or after a value
//     ("block_cache=206150041  # bytes"); "\#" is a literal '#'.
//   - Blanks around section headers, keys and values are dropped.
//   - A header is [Name] or [Name "argument"].
//   - Every other non-blank line is key=value, split at the first '=';
//     the value may be empty and may itself contain '=' (a {k=v;...}
//     struct).
//
// A key outside any section, a section or a key twice, and a line that is
// neither a header nor key=value are errors naming the line; every one of
// them is reported, one per line.
func parseOptionsFile(data []byte) ([]*optionsSection, error) {
	var sections []*optionsSection
	var cur *optionsSection
	seenSections := map[string]int{}
	var seenKeys map[string]int
	var probs []string
	for i, raw := range splitNaturalLines(string(data)) {
		lineNo := i + 1
		line := strings.TrimSpace(stripOptionsComment(raw))
		if line == "" {
			continue
		}
		if line[0] == '[' {
			s, err := parseSectionHeader(line)
			if err != nil {
				probs = append(probs, fmt.Sprintf("line %d: %v", lineNo, err))
				cur, seenKeys = &optionsSection{}, map[string]int{} // its keys are not checked twice
				continue
			}
			s.line = lineNo
			if first, dup := seenSections[s.title()]; dup {
				probs = append(probs, fmt.Sprintf("line %d: section %s appears twice (first at line %d)", lineNo, s.title(), first))
			} else {
				seenSections[s.title()] = lineNo
				sections = append(sections, s)
			}
			cur = s
			seenKeys = map[string]int{}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case !ok || key == "":
			probs = append(probs, fmt.Sprintf("line %d: %q is neither a [section] header nor key=value", lineNo, line))
			continue
		case cur == nil:
			probs = append(probs, fmt.Sprintf("line %d: %s=%s comes before any [section] header", lineNo, key, value))
			continue
		}
		if first, dup := seenKeys[key]; dup {
			probs = append(probs, fmt.Sprintf("line %d: %s %s is set twice (first at line %d)", lineNo, cur.title(), key, first))
			continue
		}
		seenKeys[key] = lineNo
		cur.entries = append(cur.entries, optionsEntry{key: key, value: strings.ReplaceAll(value, `\#`, "#"), line: lineNo})
	}
	switch len(probs) {
	case 0:
		return sections, nil
	case 1:
		return nil, errors.New(probs[0])
	}
	return nil, errors.Newf("%d problems:\n  %s", len(probs), strings.Join(probs, "\n  "))
}

// stripOptionsComment cuts line at its first '#' that is not escaped.
func stripOptionsComment(line string) string {
	for i := 0; i < len(line); i++ {
		if line[i] == '#' && (i == 0 || line[i-1] != '\\') {
			return line[:i]
		}
	}
	return line
}

// parseSectionHeader parses a trimmed "[Name]" or "[Name \"arg\"]".
func parseSectionHeader(line string) (*optionsSection, error) {
	if !strings.HasSuffix(line, "]") {
		return nil, errors.Newf("section header %q does not end with ']'", line)
	}
	inner := strings.TrimSpace(line[1 : len(line)-1])
	name, rest := inner, ""
	if i := strings.IndexAny(inner, " \t"); i >= 0 {
		name, rest = inner[:i], strings.TrimSpace(inner[i:])
	}
	s := &optionsSection{name: name}
	if rest != "" {
		if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' || strings.Count(rest, `"`) != 2 {
			return nil, errors.Newf("section header %q: the argument must be one quoted word, as in [CFOptions \"default\"]", line)
		}
		s.arg, s.hasArg = rest[1:len(rest)-1], true
	}
	if s.name == "" {
		return nil, errors.Newf("section header %q has no name", line)
	}
	return s, nil
}
