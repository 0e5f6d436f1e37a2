package conf

import (
	"strings"

	"github.com/cockroachdb/errors"
)

// problems collects the errors of one file, so that a file is reported
// whole, not one error per attempt.
type problems struct {
	list []string
}

func (p *problems) addf(format string, args ...any) {
	p.list = append(p.list, errors.Newf(format, args...).Error())
}

// err returns nil, the one problem, or every problem of the file called
// name (of the configuration, when name is empty: the caller names it),
// one per line.
func (p *problems) err(name string) error {
	switch len(p.list) {
	case 0:
		return nil
	case 1:
		return errors.New(p.list[0])
	}
	if name == "" {
		return errors.Newf("%d problems:\n  %s", len(p.list), strings.Join(p.list, "\n  "))
	}
	return errors.Newf("%s: %d problems:\n  %s", name, len(p.list), strings.Join(p.list, "\n  "))
}

// prefixProblems names the file in the error of a parser that already
// lists every problem with its line ("line 3: ...").
func prefixProblems(name string, err error) error {
	return errors.Wrapf(err, "%s", name)
}
