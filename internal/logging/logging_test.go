package logging

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/errors"
	"github.com/stretchr/testify/require"
)

// blockError is a failure at one offset of one file, as a table's block
// read error is.
type blockError struct {
	file   string
	offset int64
}

func (e *blockError) Error() string {
	return fmt.Sprintf("%s: block at offset %d: checksum mismatch", e.file, e.offset)
}

func (e *blockError) FileOffset() (string, int64) { return e.file, e.offset }

// corrupt returns a block error wrapped as the read path wraps it (stack
// traces attached on the way).
func corrupt(file string, offset int64, entry int) error {
	err := errors.WithStack(&blockError{file: file, offset: offset})
	return errors.Wrapf(err, "reading entry %d", entry)
}

// fakeClock is a clock the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func lines(buf *bytes.Buffer) []string {
	s := strings.TrimSuffix(buf.String(), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestErrorsRenderAsMessageChain: an error attribute is its message chain,
// on one line, in both formats; with stacks only at debug.
func TestErrorsRenderAsMessageChain(t *testing.T) {
	err := errors.Wrap(errors.Newf("checksum mismatch\nat offset %d", 932), "reading table 000004.sst")
	for _, format := range []Format{FormatText, FormatJSON} {
		var buf bytes.Buffer
		New(&buf, Options{Format: format}).Error("read failed", "err", err, "group", slog.GroupValue(slog.Any("cause", err)))
		out := lines(&buf)
		require.Len(t, out, 1, "%s: one line per event:\n%s", format, buf.String())
		require.NotContains(t, out[0], "stack trace", format)
		require.NotContains(t, out[0], ".go:", format)
		require.Less(t, len(out[0]), 400, "%s: %s", format, out[0])
		if format == FormatJSON {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(out[0]), &m))
			require.Equal(t, err.Error(), m["err"])
			require.Equal(t, err.Error(), m["group"].(map[string]any)["cause"])
		} else {
			require.Contains(t, out[0], `err="reading table 000004.sst: checksum mismatch\nat offset 932"`)
			require.Contains(t, out[0], `group.cause="reading table`)
		}

		buf.Reset()
		New(&buf, Options{Format: format, Level: slog.LevelDebug}).Error("read failed", "err", err)
		out = lines(&buf)
		require.Len(t, out, 1, "%s at debug: still one line:\n%s", format, buf.String())
		require.Contains(t, out[0], "stack trace", "%s: debug shows the stacks", format)
	}
}

// TestPlainTextHandlerPrintsStacks documents why the handler replaces
// error attributes: slog's own text handler prints them with %+v.
func TestPlainTextHandlerPrintsStacks(t *testing.T) {
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Error("read failed", "err", errors.New("boom"))
	require.Contains(t, buf.String(), "stack trace")
}

func TestLevelAndFormat(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{Level: slog.LevelWarn})
	l.Info("not written")
	l.Warn("written")
	out := lines(&buf)
	require.Len(t, out, 1)
	require.Contains(t, out[0], "level=WARN msg=written")

	for s, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, " warn ": slog.LevelWarn, "error": slog.LevelError} {
		got, err := ParseLevel(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	_, err := ParseLevel("verbose")
	require.ErrorContains(t, err, `log level "verbose" is not one of debug, info, warn, error`)
	f, err := ParseFormat("JSON")
	require.NoError(t, err)
	require.Equal(t, FormatJSON, f)
	_, err = ParseFormat("xml")
	require.ErrorContains(t, err, `log format "xml" is not one of text, json`)
}

// TestRepeatsOfOnePlaceAreLimited: a damaged block read by many requests
// logs one line per minute, the next one counting the lines dropped.
func TestRepeatsOfOnePlaceAreLimited(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	var buf bytes.Buffer
	l := New(&buf, Options{Now: clock.now})
	for i := 0; i < 100; i++ {
		l.Error("data API request failed", "entry", i, "err", corrupt("db/000004.sst", 932, i))
		clock.advance(100 * time.Millisecond) // 10 s in all
	}
	out := lines(&buf)
	require.Len(t, out, 1, buf.String())
	require.Contains(t, out[0], "entry=0 ")
	require.NotContains(t, out[0], "suppressed")

	// Another block, another file, another message, an error naming no
	// place, a derived logger: each is its own line.
	l.Error("data API request failed", "err", corrupt("db/000004.sst", 4096, 0))
	l.Error("data API request failed", "err", corrupt("db/000007.sst", 932, 0))
	l.Warn("compaction failed", "err", corrupt("db/000004.sst", 932, 0))
	l.Error("data API request failed", "err", errors.New("no space left on device"))
	l.Error("data API request failed", "err", errors.New("no space left on device"))
	l.With("dir", "d1").Error("data API request failed", "err", corrupt("db/000004.sst", 932, 0))
	out = lines(&buf)
	require.Len(t, out, 6, buf.String())

	// A minute after the first line: the next repeat is written with the
	// count of the ones dropped (99 + 1 from the derived logger).
	clock.advance(50 * time.Second)
	l.Error("data API request failed", "entry", 100, "err", corrupt("db/000004.sst", 932, 100))
	out = lines(&buf)
	require.Len(t, out, 7, buf.String())
	require.Contains(t, out[6], "entry=100 ")
	require.Contains(t, out[6], "suppressed=100")
	// ...and the count starts again.
	clock.advance(time.Minute)
	l.Error("data API request failed", "err", corrupt("db/000004.sst", 932, 101))
	out = lines(&buf)
	require.Len(t, out, 8)
	require.NotContains(t, out[7], "suppressed")
}

// TestRepeatLimiterMemoryIsBounded: more failing places than the limiter
// remembers are all logged, and it remembers at most maxRepeatKeys.
func TestRepeatLimiterMemoryIsBounded(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1_000_000, 0)}
	var buf bytes.Buffer
	h := newRepeatHandler(slog.NewTextHandler(&buf, nil), time.Minute, clock.now)
	l := slog.New(h)
	for i := 0; i < 3*maxRepeatKeys; i++ {
		l.Error("read failed", "err", corrupt("t.sst", int64(i), i))
	}
	require.Len(t, lines(&buf), 3*maxRepeatKeys)
	require.Len(t, h.state.places, maxRepeatKeys)
	// The remembered ones are limited; after the interval they expire to
	// make room for new places.
	l.Error("read failed", "err", corrupt("t.sst", 0, 0))
	require.Len(t, lines(&buf), 3*maxRepeatKeys)
	clock.advance(time.Minute)
	l.Error("read failed", "err", corrupt("t.sst", -5, 0))
	require.Len(t, lines(&buf), 3*maxRepeatKeys+1)
	require.Len(t, h.state.places, 1)
}

func TestRepeatLimiterOff(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf, Options{RepeatInterval: -1})
	for i := 0; i < 3; i++ {
		l.Error("read failed", "err", corrupt("t.sst", 1, i))
	}
	require.Len(t, lines(&buf), 3)
}
