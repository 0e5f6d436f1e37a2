package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/bookie-index/bookie-index/bookie"
	"github.com/bookie-index/bookie-index/vfs"
	"github.com/cockroachdb/errors"
)

// Data API paths (ours: upstream's bookie reads and writes entries over its
// own protocol, not HTTP).
const (
	PathLedgerEntry     = "/api/v1/ledger/entry"
	PathLedgerLastEntry = "/api/v1/ledger/last_entry"
	PathLedger          = "/api/v1/ledger"
	PathCheckpoint      = "/api/v1/bookie/checkpoint"
)

// DefaultMaxEntryBytes is the default limit of an entry's payload in a
// PUT of the data API.
const DefaultMaxEntryBytes = 16 << 20

// LedgerStorage is what the data API needs from the bookie's storage;
// *bookie.Storage implements it.
type LedgerStorage interface {
	AddEntry(ledgerID, entryID int64, payload []byte) error
	GetEntry(ledgerID, entryID int64) ([]byte, error)
	GetLastEntry(ledgerID int64) (int64, []byte, error)
	DeleteLedger(ledgerID int64) (bool, error)
	Checkpoint() error
	Metrics() []bookie.DirMetrics
}

// serveLedgerEntry writes (PUT) and reads (GET) one entry:
// ?ledgerId=L&entryId=E. A PUT's body is the payload; it is durable after
// the next checkpoint. A GET answers the payload, or 404; entryId -1 reads
// the ledger's last entry.
func (s *Service) serveLedgerEntry(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		if !s.authorize(w, r) {
			return
		}
		ledgerID, ok := queryID(w, r, "ledgerId", 0)
		if !ok {
			return
		}
		entryID, ok := queryID(w, r, "entryId", 0)
		if !ok {
			return
		}
		payload, ok := readBodyLimit(w, r, s.opts.MaxEntryBytes)
		if !ok {
			return
		}
		if err := s.opts.Storage.AddEntry(ledgerID, entryID, payload); err != nil {
			s.storageError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"entryId", entryID}, {"size", len(payload)}})
	case http.MethodGet, http.MethodHead:
		ledgerID, ok := queryID(w, r, "ledgerId", 0)
		if !ok {
			return
		}
		entryID, ok := queryID(w, r, "entryId", bookie.LastEntry)
		if !ok {
			return
		}
		var payload []byte
		var err error
		if entryID == bookie.LastEntry {
			entryID, payload, err = s.opts.Storage.GetLastEntry(ledgerID)
		} else {
			payload, err = s.opts.Storage.GetEntry(ledgerID, entryID)
		}
		if err != nil {
			s.storageError(w, r, err)
			return
		}
		writePayload(w, ledgerID, entryID, payload)
	default:
		methodNotServed(w, http.StatusNotFound, "GET, HEAD, PUT", msgLedgerEntryMethod)
	}
}

// serveLedgerLastEntry reads a ledger's last entry: ?ledgerId=L. It
// answers {"ledgerId", "entryId", "size", "payload" (base64)}, or 404.
func (s *Service) serveLedgerLastEntry(w http.ResponseWriter, r *http.Request) {
	if !allowGet(w, r, msgLedgerLastEntryMethod) {
		return
	}
	ledgerID, ok := queryID(w, r, "ledgerId", 0)
	if !ok {
		return
	}
	entryID, payload, err := s.opts.Storage.GetLastEntry(ledgerID)
	if err != nil {
		s.storageError(w, r, err)
		return
	}
	w.Header().Set("X-Entry-Id", strconv.FormatInt(entryID, 10))
	writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"entryId", entryID}, {"size", len(payload)}, {"payload", payload}})
}

// serveLedger deletes a ledger (DELETE ?ledgerId=L): its entries go at
// once, its index space after the next checkpoint's purge and the
// compactions that follow. It answers {"ledgerId", "existed"}.
func (s *Service) serveLedger(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodDelete {
		methodNotServed(w, http.StatusNotFound, "DELETE", msgLedgerMethod)
		return
	}
	if !s.authorize(w, r) {
		return
	}
	ledgerID, ok := queryID(w, r, "ledgerId", 0)
	if !ok {
		return
	}
	existed, err := s.opts.Storage.DeleteLedger(ledgerID)
	if err != nil {
		s.storageError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonObject{{"ledgerId", ledgerID}, {"existed", existed}})
}

// serveCheckpoint runs a checkpoint of every directory (PUT) and answers
// when it is done: every entry written before is durable.
func (s *Service) serveCheckpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPut {
		methodNotServed(w, http.StatusNotFound, "PUT", msgCheckpointMethod)
		return
	}
	if !s.authorize(w, r) {
		return
	}
	start := s.opts.Now()
	if err := s.opts.Storage.Checkpoint(); err != nil {
		s.storageError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, jsonObject{{"checkpoint", "done"}, {"durationMs", s.opts.Now().Sub(start).Milliseconds()}})
}

// queryID parses an id from the query: an integer from minimum (0, or
// bookie.LastEntry where it means "the last entry") to MaxInt64. Anything
// else is answered 400 with what is wrong, before the storage sees it.
func queryID(w http.ResponseWriter, r *http.Request, name string, minimum int64) (int64, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Missing query parameter %s.", name))
		return 0, false
	}
	id, err := strconv.ParseInt(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is out of range: ids are 0 to %d.", name, v, int64(math.MaxInt64)))
		return 0, false
	case err != nil:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is not an integer.", name, v))
		return 0, false
	case id < minimum && minimum == bookie.LastEntry:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is negative: ids are 0 to %d, and %d reads the last entry.", name, v, int64(math.MaxInt64), bookie.LastEntry))
		return 0, false
	case id < minimum:
		writeText(w, http.StatusBadRequest, fmt.Sprintf("Query parameter %s=%q is negative: ids are 0 to %d.", name, v, int64(math.MaxInt64)))
		return 0, false
	}
	return id, true
}

// writePayload answers an entry's payload.
func writePayload(w http.ResponseWriter, ledgerID, entryID int64, payload []byte) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(payload)))
	w.Header().Set("X-Ledger-Id", strconv.FormatInt(ledgerID, 10))
	w.Header().Set("X-Entry-Id", strconv.FormatInt(entryID, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(payload)
}

// storageError answers a storage error: 404 for an absent entry or
// ledger, 400 for a bad argument, 503 for a rejected write (the write
// cache is full: retry later), a write to a read-only storage, a write
// that failed for lack of space, or a closing storage; 500 otherwise.
func (s *Service) storageError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, bookie.ErrNoEntry), errors.Is(err, bookie.ErrNoLedger):
		writeText(w, http.StatusNotFound, err.Error())
	case errors.Is(err, bookie.ErrInvalidArgument):
		writeText(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, bookie.ErrRejected):
		w.Header().Set("Retry-After", "1")
		writeText(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, bookie.ErrClosed):
		writeText(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, bookie.ErrReadOnly), vfs.IsNoSpace(err):
		readOnlyError(w, err)
	default:
		s.log.Error("data API request failed", "method", r.Method, "path", r.URL.Path, "query", r.URL.RawQuery, "err", err)
		writeText(w, http.StatusInternalServerError, err.Error())
	}
}
