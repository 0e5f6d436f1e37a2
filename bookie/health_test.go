package bookie

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/bookie/entrylog"
	"github.com/bookie-index/bookie-index/internal/logging"
	"github.com/stretchr/testify/require"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReadCorruptionLoggedOnceAndCounted: a damaged entry-log record met
// by reads fails each of them as corruption, is counted each time, and is
// logged once, with the log file and the offset.
func TestReadCorruptionLoggedOnceAndCounted(t *testing.T) {
	env := newTestEnv()
	s := env.open(t)
	require.NoError(t, s.AddEntry(2, 0, payload(2, 0, 0)))
	require.NoError(t, s.Checkpoint())
	loc := location(t, s, 2, 0)
	require.NoError(t, s.Close())

	// Flip a payload byte of the record (its header is before the payload).
	logPath := filepath.Join(env.dirs[0], "current", entrylog.LogFileName(loc>>32))
	data := readFileBytes(t, env.mem, logPath)
	data[len(data)-1] ^= 0xff
	writeFileBytes(t, env.mem, logPath, data)

	var logs syncBuffer
	env.tweak = func(o *Options) { o.Logger = logging.New(&logs, logging.Options{}); o.ReadCacheSize = -1 }
	s = env.open(t)
	defer s.Close()
	require.NoError(t, s.Health())
	for range 3 {
		_, err := s.GetEntry(2, 0)
		require.ErrorIs(t, err, entrylog.ErrCorruption)
	}
	require.Equal(t, int64(3), s.Metrics()[0].ReadCorruptions)
	lines := strings.Count(logs.String(), "corruption met by a read")
	require.Equal(t, 1, lines, logs.String())
	require.Contains(t, logs.String(), logPath+" offset "+itoa(loc&0xffffffff))
	require.NotContains(t, logs.String(), "goroutine", "no stack trace")
	require.NoError(t, s.Health(), "a damaged record does not stop the storage")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
