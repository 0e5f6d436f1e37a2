package main

import (
	"flag"
	"io"
	"log/slog"
	"strings"

	"github.com/bookie-index/bookie-index/conf"
	"github.com/bookie-index/bookie-index/internal/logging"
)

// registerLogFlags adds --log-level and --log-format to fs. They are
// overrides of the logLevel and logFormat keys (so they win over the file
// and the environment, as --set does); a bad value is a usage error.
func (f *configFlags) registerLogFlags(fs *flag.FlagSet) {
	fs.Func("log-level", "lowest level logged: "+strings.Join(logging.Levels(), ", ")+
		" (the logLevel key; default info for serve, warn for the offline tools). At debug, errors carry stack traces", func(v string) error {
		if _, err := logging.ParseLevel(v); err != nil {
			return err
		}
		f.overrides["logLevel"] = strings.ToLower(strings.TrimSpace(v))
		return nil
	})
	fs.Func("log-format", "log line format: "+strings.Join(logging.Formats(), ", ")+" (the logFormat key; default text)", func(v string) error {
		if _, err := logging.ParseFormat(v); err != nil {
			return err
		}
		f.overrides["logFormat"] = strings.ToLower(strings.TrimSpace(v))
		return nil
	})
}

// newLogger returns a command's logger, writing to w at the configured
// level (def when logLevel is empty) and format. It is the one logger of
// the command: the storage, every index and engine, and the admin API log
// through it.
func newLogger(c *conf.Config, w io.Writer, def slog.Level) (*slog.Logger, error) {
	level := def
	if c.LogLevel != "" {
		var err error
		if level, err = logging.ParseLevel(c.LogLevel); err != nil {
			return nil, err
		}
	}
	format, err := logging.ParseFormat(c.LogFormat)
	if err != nil {
		return nil, err
	}
	return logging.New(w, logging.Options{Level: level, Format: format}), nil
}

// toolLogger is the logger of the commands that take no configuration
// (db, sst): warnings and errors only, as text.
func toolLogger(w io.Writer) *slog.Logger {
	return logging.New(w, logging.Options{Level: slog.LevelWarn})
}
