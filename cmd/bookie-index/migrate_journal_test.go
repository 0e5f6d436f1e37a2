package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// killedBookieDir is BookKeeper 4.18.2's own killed bookie
// (interop/bookkeeper's journal scenario): acknowledged adds only in its
// journal, a fence and explicit LACs after its last checkpoint.
const killedBookieDir = "../../interop/bookkeeper/testdata/dirs/journal"

// killedBookie is the part of its expected.json this test reads.
type killedBookie struct {
	LedgerDirs  []string `json:"ledgerDirs"`
	JournalDirs []string `json:"journalDirs"`
	Ledgers     []struct {
		ID      int64 `json:"id"`
		Fenced  bool  `json:"fenced"`
		Entries []struct {
			ID           int64  `json:"id"`
			SHA256       string `json:"sha256"`
			Checkpointed bool   `json:"checkpointed"`
		} `json:"entries"`
	} `json:"ledgers"`
}

// TestMigrateCommandKilledBookie is the migration of a BookKeeper bookie
// that was killed, without restarting it under BookKeeper: `migrate`
// converts its indexes and replays its journal (saying so), and `serve`
// then answers every entry BookKeeper acknowledged, the ones only in the
// journal included, byte for byte.
func TestMigrateCommandKilledBookie(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, filepath.WalkDir(killedBookieDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(killedBookieDir, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), b, 0o644)
	}))
	b, err := os.ReadFile(filepath.Join(root, "expected.json"))
	require.NoError(t, err)
	var e killedBookie
	require.NoError(t, json.Unmarshal(b, &e))
	abs := func(dirs []string) string {
		var out []string
		for _, d := range dirs {
			out = append(out, filepath.Join(root, d))
		}
		return strings.Join(out, ",")
	}
	confPath := filepath.Join(root, "bk_server.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(strings.Join([]string{
		"ledgerDirectories=" + abs(e.LedgerDirs),
		"journalDirectories=" + abs(e.JournalDirs),
		"httpServerPort=0",
		"prometheusStatsHttpEnable=false",
		"entryLocationRocksdbConf=" + filepath.Join(root, "absent.conf"),
		"dbStorage_rocksDB_writeBufferSizeMB=1",
		"dbStorage_writeCacheMaxSizeMb=16",
	}, "\n")+"\n"), 0o600))

	code, out, errOut := runCmd("migrate", "--conf", confPath)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	journalOnly := 0
	for _, l := range e.Ledgers {
		for _, en := range l.Entries {
			if !en.Checkpointed {
				journalOnly++
			}
		}
	}
	require.Positive(t, journalOnly)
	require.Contains(t, out, "migrate journal "+abs(e.JournalDirs)+": replayed ")
	require.Contains(t, out, "; BookKeeper's kept as "+filepath.Join(root, e.LedgerDirs[0], "current", "lastMark.bookkeeper"))
	t.Logf("%s", out)

	base, stop, err := startServeIn(t, "--conf", confPath)
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	for _, l := range e.Ledgers {
		for _, en := range l.Entries {
			code, body := request(t, http.MethodGet, fmt.Sprintf("%s/api/v1/ledger/entry?ledgerId=%d&entryId=%d", base, l.ID, en.ID), "", "")
			require.Equal(t, http.StatusOK, code, "ledger %d entry %d (checkpointed by BookKeeper: %v): %s", l.ID, en.ID, en.Checkpointed, body)
			h := sha256.New()
			var ids [16]byte
			binary.BigEndian.PutUint64(ids[:8], uint64(l.ID))
			binary.BigEndian.PutUint64(ids[8:], uint64(en.ID))
			h.Write(ids[:])
			h.Write([]byte(body))
			require.Equal(t, en.SHA256, hex.EncodeToString(h.Sum(nil)), "ledger %d entry %d", l.ID, en.ID)
		}
	}
}
