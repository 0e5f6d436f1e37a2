package logging

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/cockroachdb/errors"
)

// Format is how lines are written.
type Format string

// The formats.
const (
	// FormatText is slog's text format: time=... level=... msg=... key=value.
	FormatText Format = "text"
	// FormatJSON is one JSON object per line.
	FormatJSON Format = "json"
)

// Levels returns the level names ParseLevel accepts, lowest first.
func Levels() []string { return []string{"debug", "info", "warn", "error"} }

// Formats returns the format names ParseFormat accepts.
func Formats() []string { return []string{string(FormatText), string(FormatJSON)} }

// DefaultRepeatInterval is how long repeats of a failure at one place are
// held back.
const DefaultRepeatInterval = time.Minute

// Options configure New. Zero fields mean their defaults.
type Options struct {
	// Level is the lowest level written. Default info (slog's zero level).
	Level slog.Level
	// Format. Default FormatText.
	Format Format
	// RepeatInterval: a failure at one file offset is logged once per
	// interval per message. Default DefaultRepeatInterval; negative: every
	// repeat is logged.
	RepeatInterval time.Duration
	// Now is the clock of the repeat limiter. Default time.Now.
	Now func() time.Time
}

// New returns a logger writing one line per record to w.
func New(w io.Writer, o Options) *slog.Logger {
	if o.RepeatInterval == 0 {
		o.RepeatInterval = DefaultRepeatInterval
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	ho := &slog.HandlerOptions{Level: o.Level, ReplaceAttr: errorsAs(o.Level <= slog.LevelDebug)}
	var h slog.Handler
	if o.Format == FormatJSON {
		h = slog.NewJSONHandler(w, ho)
	} else {
		h = slog.NewTextHandler(w, ho)
	}
	if o.RepeatInterval > 0 {
		h = newRepeatHandler(h, o.RepeatInterval, o.Now)
	}
	return slog.New(h)
}

// errorsAs returns a ReplaceAttr that renders error values as their
// message chain, or with every detail (%+v: wrapping frames and stack
// traces) when verbose. slog's text handler would print any error with
// %+v; its JSON handler with Error().
func errorsAs(verbose bool) func([]string, slog.Attr) slog.Attr {
	return func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() != slog.KindAny {
			return a
		}
		err, ok := a.Value.Any().(error)
		if !ok || err == nil {
			return a
		}
		if verbose {
			return slog.String(a.Key, fmt.Sprintf("%+v", err))
		}
		return slog.String(a.Key, err.Error())
	}
}

// ParseLevel parses a level name (case-insensitive): debug, info, warn or
// error.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, errors.Newf("log level %q is not one of %s", s, strings.Join(Levels(), ", "))
}

// ParseFormat parses a format name: text or json.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case FormatText, FormatJSON:
		return f, nil
	}
	return "", errors.Newf("log format %q is not one of %s", s, strings.Join(Formats(), ", "))
}
