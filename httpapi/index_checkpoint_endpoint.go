package httpapi

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/bookie-index/bookie-index/bookie"
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
// restore"). It is a mutation: PUT or POST, behind the admin token.
func (s *Service) serveIndexCheckpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		methodNotServed(w, http.StatusNotFound, "PUT, POST", msgIndexCheckpointMethod)
		return
	}
	if !s.authorize(w, r) {
		return
	}
	dir := r.URL.Query().Get("dir")
	if dir == "" || !filepath.IsAbs(dir) {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter dir=%q must be an absolute path on the server; the checkpoints go into new directories under it.", dir))
		return
	}
	cp, ok := s.opts.Storage.(IndexCheckpointer)
	if !ok {
		writeText(w, http.StatusNotImplemented, "This storage cannot checkpoint its indexes.")
		return
	}
	start := s.opts.Now()
	res, err := cp.CheckpointIndexes(filepath.Clean(dir))
	if err != nil {
		s.log.Error("index checkpoint failed", "dir", dir, "err", err)
		writeText(w, http.StatusInternalServerError, err.Error())
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
