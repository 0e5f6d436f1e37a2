package httpapi

import (
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"syscall"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/cockroachdb/errors"
)

// PathIndexCheckpoint checkpoints the storage's indexes into a new
// directory: PUT or POST ?dir=/absolute/path.
const PathIndexCheckpoint = "/api/v1/bookie/index_checkpoint"

// IndexCheckpointer is what the index checkpoint endpoint needs of the
// storage; *bookie.Storage implements it. The endpoint exists only when
// Options.Storage does.
type IndexCheckpointer interface {
	CheckpointIndexes(dir string) ([]bookie.IndexCheckpoint, error)
}

// serveIndexCheckpoint writes a consistent copy of every directory's entry
// location and ledgers indexes under ?dir (on the server's file system;
// absolute; it may exist, the checkpoints in it must not):
// dir/<i>/current/{locations,ledgers} for the i-th index directory, tables hard-linked (see
// bookie.Storage.CheckpointIndexes and docs/operations.md, "Backup and
// restore"). It is a mutation: PUT or POST, behind the admin token. The
// directory must follow the rules of backup_path.go (400 naming the one
// it breaks, 409 when a checkpoint is there already); one checkpoint runs
// at a time.
func (s *Service) serveIndexCheckpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		methodNotServed(w, http.StatusNotFound, "PUT, POST", msgIndexCheckpointMethod)
		return
	}
	q, ok := s.authorizedQuery(w, r)
	if !ok {
		return
	}
	cp, ok := s.opts.Storage.(IndexCheckpointer)
	if !ok {
		writeText(w, http.StatusNotImplemented, "This storage cannot checkpoint its indexes.")
		return
	}
	s.checkpointMu.Lock()
	defer s.checkpointMu.Unlock()
	dir, refused := s.backupRules.check(q.Get("dir"), len(s.dirs))
	if refused != nil {
		if refused.status >= 500 {
			s.log.Error("index checkpoint: the server's directories cannot be checked", "err", refused.msg)
		}
		writeText(w, refused.status, refused.msg)
		return
	}
	start := s.opts.Now()
	res, err := cp.CheckpointIndexes(dir)
	if err != nil {
		s.checkpointError(w, dir, err)
		return
	}
	var dirs []any
	for _, c := range res {
		dirs = append(dirs, jsonObject{
			{"indexDir", c.IndexDir}, {"checkpoint", c.Dir},
			{"locationsTables", c.Locations.Tables}, {"locationsBytes", c.Locations.Bytes}, {"locationsLastSeqNum", c.Locations.LastSeqNum},
			{"ledgersTables", c.Ledgers.Tables}, {"ledgersBytes", c.Ledgers.Bytes},
			{"hardLinked", c.Locations.Linked + c.Ledgers.Linked},
		})
	}
	s.log.Info("indexes checkpointed", "dir", dir, "directories", len(res), "duration", s.opts.Now().Sub(start))
	writeJSON(w, http.StatusOK, jsonObject{{"checkpoint", "done"}, {"dir", dir}, {"directories", dirs},
		{"durationMs", s.opts.Now().Sub(start).Milliseconds()}})
}

// checkpointError answers a failed index checkpoint: what the target
// directory makes impossible (it exists, a component is not a directory,
// the server may not write there, the name is too long, the file system is
// read-only) is the client's choice, 400 or 409; a full file system 507;
// the storage's own state as the data API answers it (503 when closing or
// read-only); anything else is a server fault, 500.
func (s *Service) checkpointError(w http.ResponseWriter, dir string, err error) {
	msg := fmt.Sprintf("Index checkpoint under %s failed: %v", dir, err)
	switch {
	case errors.Is(err, fs.ErrExist):
		writeText(w, http.StatusConflict, msg)
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ENAMETOOLONG), errors.Is(err, syscall.EACCES),
		errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EISDIR):
		writeText(w, http.StatusBadRequest, msg)
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		writeText(w, http.StatusInsufficientStorage, msg)
	case errors.Is(err, bookie.ErrClosed):
		writeText(w, http.StatusServiceUnavailable, msg)
	case errors.Is(err, bookie.ErrReadOnly):
		readOnlyError(w, err)
	default:
		s.log.Error("index checkpoint failed", "dir", dir, "err", err)
		writeText(w, http.StatusInternalServerError, msg)
	}
}

// defaultDataDirs returns the directories of opts.Directories whose
// metric labels are storage directories (<dir>/current): the configured
// ledger and index directories, which no checkpoint may go into.
func defaultDataDirs(dirs []Directory) []DataDir {
	var out []DataDir
	for _, d := range dirs {
		for _, p := range []struct{ kind, path string }{{"ledger directory", d.LedgerDir}, {"index directory", d.IndexDir}} {
			if filepath.Base(p.path) == "current" {
				out = append(out, DataDir{Kind: p.kind, Path: filepath.Dir(p.path)})
			}
		}
	}
	return out
}
