package bookie

import (
	"bytes"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bookie-index/bookie-index/lsm"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/stretchr/testify/require"
)

// logBuffer is a log stream that background goroutines may write while
// the test reads it.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// appendTornTail appends a few bytes that are not a whole record to the
// newest WAL of the DB in dir: what a crash in the middle of an
// unsynced write leaves.
func appendTornTail(t *testing.T, fs vfs.FS, dir string) string {
	t.Helper()
	names, err := fs.List(dir)
	require.NoError(t, err)
	var wal string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			wal = filepath.Join(dir, n) // sorted: the last is the newest
		}
	}
	require.NotEmpty(t, wal, "no WAL in %s: %v", dir, names)
	f, err := fs.Open(wal)
	require.NoError(t, err)
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<30))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	w, err := fs.Create(wal)
	require.NoError(t, err)
	_, err = w.Write(append(data, 0xa5, 0x5a, 0xa5))
	require.NoError(t, err)
	require.NoError(t, w.Sync())
	require.NoError(t, w.Close())
	return wal
}

// TestEngineLinesReachTheStorageLogger: the storage's logger is the one
// of both indexes' engines, even when their options come from
// lsm.DefaultOptions (as the configuration's do): an engine's WARN at open
// reaches it, naming the DB.
func TestEngineLinesReachTheStorageLogger(t *testing.T) {
	env := newTestEnv()
	var out logBuffer
	env.tweak = func(o *Options) {
		engine := lsm.DefaultOptions()
		engine.WriteBufferSize, engine.TargetFileSizeBase, engine.BlockSize = 64<<10, 64<<10, 4<<10
		o.Index.Engine = engine
		o.Logger = slog.New(slog.NewTextHandler(&out, nil))
	}
	s := env.open(t)
	for e := int64(0); e < 50; e++ {
		require.NoError(t, s.AddEntry(7, e, payload(7, e, 0)))
	}
	require.NoError(t, s.Checkpoint())
	require.NoError(t, s.Close())

	current := filepath.Join(env.dirs[0], "current")
	dbs := []string{filepath.Join(current, "locations"), filepath.Join(current, "ledgers")}
	for _, db := range dbs {
		appendTornTail(t, env.mem, db)
	}
	s = env.open(t)
	_, err := s.GetEntry(7, 49)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	log := out.String()
	for _, db := range dbs {
		found := false
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, "level=WARN") && strings.Contains(line, "WAL") && strings.Contains(line, "db="+db) {
				found = true
			}
		}
		require.True(t, found, "no engine WARN about the torn WAL of %s in the storage's log:\n%s", db, log)
	}
	require.Contains(t, log, "ledger directory open", "the storage's own lines go to the same logger")
}
